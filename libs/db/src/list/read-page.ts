// One list reader for every list (contract §4 page mode, §22 cursor mode). It reads which ids
// make up a page, in order, from a filtered tenant-scoped query; the caller then loads those
// rows in full (a deferred join: the walk touches only the index, the rows are read once).
import { type SelectQueryBuilder, sql } from 'kysely';
import type { CursorPosition } from './cursor.ts';

/** PostgreSQL type of a sort column, to cast a cursor's text key back for the keyset comparison. */
export type SortType = 'integer' | 'bigint' | 'text' | 'timestamptz' | 'date' | 'numeric';

/** Which part of a list to read. */
export interface ListWindow {
  perPage: number;
  sortField: string;
  sortType: SortType;
  descending: boolean;
  /** Page mode: 1-based page number. */
  page?: number;
  /** Cursor mode: continue after this position (undefined on the first cursor page). */
  after?: CursorPosition;
}

/** The ids of one page, in list order, and what the pagination object needs. */
export interface PageOfIds {
  ids: number[];
  /** Null in cursor mode: cursor pages never count. */
  total: number | null;
  hasMore: boolean;
  /** Position of the last row, for `next_cursor`. */
  last?: CursorPosition;
}

// One reader serves every table's query builder.
type AnyQuery = SelectQueryBuilder<any, any, {}>;

/** Which rows to read for a page in page mode, given the filtered total. */
export interface PageWindow {
  /** False when the page is past the end: no rows query at all. */
  any: boolean;
  offset: number;
  limit: number;
  /** Read in the opposite order (then reverse) because the page is nearer the end. */
  reversed: boolean;
}

/**
 * OFFSET costs a walk over every skipped index entry, so a page in the second half of the
 * list is read from the other end of the same index with the smaller offset, then reversed:
 * the last page costs what the first one does. Sorts always end with `id`, so the order is
 * total and reading backwards yields exactly the same rows.
 */
export function pageWindow(total: number, offset: number, perPage: number): PageWindow {
  if (offset >= total) return { any: false, offset, limit: perPage, reversed: false };
  const limit = Math.min(perPage, total - offset);
  if (offset <= total / 2) return { any: true, offset, limit, reversed: false };
  return { any: true, offset: total - offset - limit, limit, reversed: true };
}

interface KeyRow {
  id: number;
  sort_key: string;
}

function orderedKeys(source: AnyQuery, table: string, window: ListWindow, descending: boolean) {
  const sortRef = sql.ref(`${table}.${window.sortField}`);
  const idRef = sql.ref(`${table}.id`);
  const direction = descending ? 'desc' : 'asc';
  return source
    .select([sql<number>`${idRef}`.as('id'), sql<string>`${sortRef}::text`.as('sort_key')])
    .orderBy(sortRef, direction)
    .orderBy(idRef, direction);
}

const positionOf = (row: KeyRow | undefined): CursorPosition | undefined => (row ? { key: row.sort_key, id: Number(row.id) } : undefined);

/** How page mode learns the filtered total: a query to count, or a function that knows it (a maintained count). */
export type ListTotal = AnyQuery | (() => Promise<number>);

async function totalOf(count: ListTotal): Promise<number> {
  if (typeof count === 'function') return count();
  const { total } = (await count.select(sql<string>`count(*)`.as('total')).executeTakeFirstOrThrow()) as { total: string };
  return Number(total);
}

/**
 * The ids of one page. `count` is the filtered query (page mode counts it) or what knows its
 * total; `source` is what the page is walked over, when it differs (a fenced search), else `count`
 * itself (then `count` must be a query).
 *
 * Page 1 is read from the front whatever the total, so its ids are read while the total is
 * counted (two connections, each statement as before) instead of after it.
 */
export async function readPageIds(
  count: ListTotal,
  table: string,
  window: ListWindow,
  source: AnyQuery = count as AnyQuery,
): Promise<PageOfIds> {
  if (window.page === undefined) return readCursorPage(source, table, window);
  const firstPage =
    window.page === 1
      ? (orderedKeys(source, table, window, window.descending).limit(window.perPage).execute() as Promise<KeyRow[]>)
      : undefined;
  // Both settle before either's error is thrown, so no rejection is left unobserved.
  const [counted, first] = await Promise.allSettled([totalOf(count), firstPage]);
  if (counted.status === 'rejected') throw counted.reason;
  if (first.status === 'rejected') throw first.reason;
  const totalRows = counted.value;
  const page = pageWindow(totalRows, (window.page - 1) * window.perPage, window.perPage);
  const lastPage = Math.max(1, Math.ceil(totalRows / window.perPage));
  const hasMore = window.page < lastPage;
  if (!page.any) return { ids: [], total: totalRows, hasMore };
  const rows =
    first.value ??
    ((await orderedKeys(source, table, window, window.descending !== page.reversed)
      .limit(page.limit)
      .offset(page.offset)
      .execute()) as KeyRow[]);
  if (page.reversed) rows.reverse();
  return { ids: rows.map((r) => Number(r.id)), total: totalRows, hasMore, last: positionOf(rows.at(-1)) };
}

async function readCursorPage(source: AnyQuery, table: string, window: ListWindow): Promise<PageOfIds> {
  let query = orderedKeys(source, table, window, window.descending);
  if (window.after) {
    const sortRef = sql.ref(`${table}.${window.sortField}`);
    const idRef = sql.ref(`${table}.id`);
    const key = sql`cast(${window.after.key} as ${sql.raw(window.sortType)})`;
    // Row comparison walks the (sort, id) index from the position on, whatever was inserted or deleted before it.
    query = window.descending
      ? query.where(sql<boolean>`(${sortRef}, ${idRef}) < (${key}, ${window.after.id})`)
      : query.where(sql<boolean>`(${sortRef}, ${idRef}) > (${key}, ${window.after.id})`);
  }
  const rows = (await query.limit(window.perPage + 1).execute()) as KeyRow[];
  const hasMore = rows.length > window.perPage;
  const page = rows.slice(0, window.perPage);
  return { ids: page.map((r) => Number(r.id)), total: null, hasMore, last: positionOf(page.at(-1)) };
}

/** Rows loaded by id, put back in the page's order. */
export function inIdOrder<R extends { id: number }>(rows: R[], ids: number[]): R[] {
  const byId = new Map(rows.map((row) => [Number(row.id), row]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

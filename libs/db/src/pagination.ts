import type { Static } from '@sinclair/typebox';
import { t as Type } from 'elysia';
import { type SelectQueryBuilder, sql } from 'kysely';

/** Query parameters every list endpoint accepts (contract §4). Unknown parameters are ignored. */
export const ListQuery = Type.Object(
  {
    // The raw strings are checked against these bounds by `listQuery` (libs/http) before Elysia coerces them.
    per_page: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, default: 15, description: 'Items per page, 1..100 (default 15); out of range → 422' }),
    ),
    page: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 2_147_483_647,
        default: 1,
        description: 'Page number, 1..2147483647 (default 1); out of range → 422',
      }),
    ),
    sort: Type.Optional(
      Type.String({ description: 'Sort field, `-field` for descending: id, created_at, updated_at, and name where present' }),
    ),
    updated_since: Type.Optional(
      Type.String({ format: 'date-time', description: 'Only items updated at or after this RFC 3339 instant (with Z or an offset)' }),
    ),
  },
  { additionalProperties: true },
);

/** ListQuery extended with a resource's own filters; unknown query parameters stay allowed. */
export const listQueryWith = <P extends Record<string, any>>(filters: P) =>
  Type.Object({ ...ListQuery.properties, ...filters }, { additionalProperties: true });
export type ListQuery = Static<typeof ListQuery>;

/** The `pagination` object of list responses. */
export const Pagination = Type.Object({
  total: Type.Integer(),
  per_page: Type.Integer(),
  current_page: Type.Integer(),
  last_page: Type.Integer(),
  has_more: Type.Boolean(),
});
export type Pagination = Static<typeof Pagination>;

/** Computes the pagination object from a total count and the requested page. */
export function paginationOf(total: number, perPage: number, page: number): Pagination {
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  return { total, per_page: perPage, current_page: page, last_page: lastPage, has_more: page < lastPage };
}

export interface PageRequest {
  perPage: number;
  page: number;
  offset: number;
  sortField: string;
  descending: boolean;
  updatedSince?: Date;
}

/**
 * Reads per_page, page, sort and updated_since into a PageRequest; returns field errors for
 * a sort field outside `sortable` or an unreadable timestamp.
 */
export function pageRequest(
  query: ListQuery,
  sortable: readonly string[],
): { request: PageRequest; errors: { field: string; message: string }[] } {
  const perPage = query.per_page ?? 15;
  const page = query.page ?? 1;
  const errors: { field: string; message: string }[] = [];
  if (perPage < 1 || perPage > 100) errors.push({ field: 'per_page', message: 'must be between 1 and 100' });
  if (page < 1) errors.push({ field: 'page', message: 'must be >= 1' });
  const rawSort = query.sort ?? 'id';
  const descending = rawSort.startsWith('-');
  const sortField = descending ? rawSort.slice(1) : rawSort;
  if (!sortable.includes(sortField))
    errors.push({ field: 'sort', message: `must be one of ${sortable.join(', ')} (prefix - for descending)` });
  let updatedSince: Date | undefined;
  if (query.updated_since !== undefined) {
    updatedSince = new Date(query.updated_since);
    if (Number.isNaN(updatedSince.getTime())) errors.push({ field: 'updated_since', message: 'must be an ISO 8601 timestamp' });
  }
  return { request: { perPage, page, offset: (page - 1) * perPage, sortField, descending, updatedSince }, errors };
}

/**
 * Runs a list query as one page: the total count and the page's rows, ordered by the requested
 * field with `id` as the tie-breaker. `select` picks the row columns.
 */
export async function fetchPage<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, {}>,
  page: PageRequest,
  select: (query: SelectQueryBuilder<DB, TB, {}>) => SelectQueryBuilder<DB, TB, O>,
): Promise<{ total: number; rows: O[] }> {
  const direction = page.descending ? 'desc' : 'asc';
  const [count, rows] = await Promise.all([
    query.select(sql<number>`count(*)`.as('total')).executeTakeFirstOrThrow() as Promise<{ total: number }>,
    select(query)
      .orderBy(sql.ref(page.sortField), direction)
      .orderBy(sql.ref('id'), direction)
      .limit(page.perPage)
      .offset(page.offset)
      .execute(),
  ]);
  return { total: Number(count.total), rows };
}

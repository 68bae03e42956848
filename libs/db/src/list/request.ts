// What a list request asks for (contract §4, §22), read once for every list.
import { type CursorPosition, decodeCursor, encodeCursor, listDigest } from './cursor.ts';
import type { ListWindow, PageOfIds, SortType } from './read-page.ts';

/** The list parameters every list accepts, after the HTTP layer checked their bounds. */
export interface ListParams {
  per_page?: number;
  page?: number;
  sort?: string;
  updated_since?: string;
  cursor?: string;
}

/** A list request: the window to read, the updated_since filter, and the digest its cursors carry. */
export interface ListRequest {
  window: ListWindow;
  updatedSince?: Date;
  digest: string;
}

/** The `pagination` object of a list response. */
export interface ListPagination {
  total: number | null;
  per_page: number;
  current_page: number | null;
  last_page: number | null;
  has_more: boolean;
  next_cursor: string | null;
}

interface FieldError {
  field: string;
  message: string;
}

/**
 * Reads a list request. `sortable` maps each sortable field to its column type; `filters` are
 * the resource's own filter values (they, the sort and `updated_since` are what a cursor is bound to).
 */
export function listRequest(
  params: ListParams,
  sortable: Record<string, SortType>,
  filters: Record<string, unknown> = {},
): { request: ListRequest; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const sort = params.sort ?? 'id';
  const descending = sort.startsWith('-');
  const sortField = descending ? sort.slice(1) : sort;
  const sortType = sortable[sortField];
  if (!sortType) errors.push({ field: 'sort', message: `must be one of ${Object.keys(sortable).join(', ')} (prefix - for descending)` });
  const digest = listDigest(sort, { ...filters, updated_since: params.updated_since });
  let after: CursorPosition | undefined;
  if (params.cursor !== undefined) {
    if (params.page !== undefined) errors.push({ field: 'cursor', message: 'cannot be combined with page' });
    const decoded = decodeCursor(params.cursor, digest);
    if ('problem' in decoded) errors.push({ field: 'cursor', message: decoded.problem });
    else after = decoded;
  }
  const window: ListWindow = {
    perPage: params.per_page ?? 15,
    sortField,
    sortType: sortType ?? 'integer',
    descending,
    ...(params.cursor === undefined ? { page: params.page ?? 1 } : { after }),
  };
  const updatedSince = params.updated_since === undefined ? undefined : new Date(params.updated_since);
  return { request: { window, updatedSince, digest }, errors };
}

/** The pagination object for a page: counted in page mode, `null` counts in cursor mode; `next_cursor` when there is more. */
export function listPagination(page: PageOfIds, request: ListRequest): ListPagination {
  const { window } = request;
  const next_cursor = page.hasMore && page.last ? encodeCursor(request.digest, page.last) : null;
  if (window.page === undefined || page.total === null)
    return { total: null, per_page: window.perPage, current_page: null, last_page: null, has_more: page.hasMore, next_cursor };
  const last_page = Math.max(1, Math.ceil(page.total / window.perPage));
  return { total: page.total, per_page: window.perPage, current_page: window.page, last_page, has_more: page.hasMore, next_cursor };
}

// What every list response shares (contract §4, §22): the pagination object and the RFC 8288
// Link header, added by the service kit to every response that carries `pagination`.
import { Type } from '@sinclair/typebox';

/** The `pagination` object of list responses. Counts are null on cursor pages. */
export const ListPagination = Type.Object(
  {
    total: Type.Union([Type.Integer(), Type.Null()], { description: 'Matching items; null on a cursor page' }),
    per_page: Type.Integer(),
    current_page: Type.Union([Type.Integer(), Type.Null()], { description: 'Null on a cursor page' }),
    last_page: Type.Union([Type.Integer(), Type.Null()], { description: 'Null on a cursor page' }),
    has_more: Type.Boolean(),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Opaque; send it as `cursor` to continue after the last item (same sort and filters). Null when has_more is false.',
    }),
  },
  { additionalProperties: false },
);

interface PaginationLike {
  current_page: number | null;
  last_page: number | null;
  has_more: boolean;
  next_cursor: string | null;
}

/** Whether a response body is a list page. */
export function isListPage(body: unknown): body is { data: unknown[]; pagination: PaginationLike } {
  return typeof body === 'object' && body !== null && Array.isArray((body as { data?: unknown }).data) && 'pagination' in body;
}

/**
 * The Link header of a list page: page mode has first, last, next (when there is more) and
 * prev (past page 1); cursor mode has next. URLs are relative to the host and repeat every
 * parameter of the request except `page` and `cursor`.
 */
export function linkHeader(url: URL, pagination: PaginationLike): string {
  const base = new URLSearchParams(url.search);
  base.delete('page');
  base.delete('cursor');
  const link = (rel: string, set: Record<string, string>) => {
    const params = new URLSearchParams(base);
    for (const [name, value] of Object.entries(set)) params.set(name, value);
    return `<${url.pathname}?${params.toString()}>; rel="${rel}"`;
  };
  if (pagination.current_page === null) return pagination.next_cursor ? link('next', { cursor: pagination.next_cursor }) : '';
  const page = pagination.current_page;
  const last = pagination.last_page ?? 1;
  const links = [link('first', { page: '1' })];
  if (page > 1) links.push(link('prev', { page: String(Math.min(page - 1, last)) }));
  if (pagination.has_more) links.push(link('next', { page: String(page + 1) }));
  links.push(link('last', { page: String(last) }));
  return links.join(', ');
}

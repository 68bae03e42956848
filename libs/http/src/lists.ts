// What every list response shares (contract §4, §22): the pagination object and the RFC 8288
// Link header, added by the service kit to every response that carries `pagination`.
import { type Static, type TProperties, Type } from '@sinclair/typebox';
import { t } from 'elysia';
import { MAX_INT } from './input/schemas.ts';

/**
 * Query parameters every list accepts (contract §4, §22). Elysia's `t` coerces the numbers;
 * `listQuery` (input/query.ts) checks the raw strings against these bounds first. Unknown
 * parameters are ignored.
 */
export const ListQuery = t.Object(
  {
    per_page: t.Optional(t.Integer({ minimum: 1, maximum: 100, default: 15, description: 'Items per page, 1..100 (default 15)' })),
    // No schema `default` here: Elysia would fill it in, and a request with `cursor` would then carry `page` too.
    page: t.Optional(t.Integer({ minimum: 1, maximum: MAX_INT, description: 'Page number, from 1 (default 1). Not with `cursor`.' })),
    sort: t.Optional(t.String({ maxLength: 64, description: 'Sort field, `-field` for descending (default `id`)' })),
    updated_since: t.Optional(
      t.String({ format: 'date-time', description: 'Only items updated at or after this RFC 3339 instant (with Z or an offset)' }),
    ),
    cursor: t.Optional(
      t.String({
        maxLength: 2048,
        description:
          'Opaque `pagination.next_cursor` of the previous page: continues after its last item, with the same sort and filters, without counting (`total`, `current_page`, `last_page` are null). Not with `page`.',
      }),
    ),
  },
  { additionalProperties: true },
);
export type ListQuery = Static<typeof ListQuery>;

/** ListQuery extended with a resource's own filters; unknown query parameters stay allowed. */
export const listQueryWith = <P extends TProperties>(filters: P) =>
  t.Object({ ...ListQuery.properties, ...filters }, { additionalProperties: true });

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
  {
    additionalProperties: false,
    title: 'ListPagination',
    examples: [{ total: 1, per_page: 15, current_page: 1, last_page: 1, has_more: false, next_cursor: null }],
  },
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

// Stage: what every response of a kind carries — a strong ETag on single resources (and 304 to
// a GET whose If-None-Match holds it, contract §24), the Link header on list pages (§22).
import { Elysia } from 'elysia';
import { etagOf, matchesIfNoneMatch } from '../etag.ts';
import { isListPage, linkHeader } from '../lists.ts';

/** A single resource answer `{ data: {...} }` (not a list, not a deletion). */
function singleResource(body: unknown): body is { data: Record<string, unknown> } {
  const data = typeof body === 'object' && body !== null ? (body as { data?: unknown }).data : undefined;
  return typeof data === 'object' && data !== null && !Array.isArray(data);
}

/** The ETag/Link plugin. */
export const responseHeaders = new Elysia({ name: 'crm-response-headers' }).onAfterHandle(
  { as: 'global' },
  ({ request, responseValue, set }) => {
    if (singleResource(responseValue)) {
      const etag = etagOf(responseValue.data);
      set.headers.etag = etag;
      if (request.method === 'GET' && matchesIfNoneMatch(request.headers.get('if-none-match'), etag))
        return new Response(null, { status: 304, headers: { etag } });
    } else if (isListPage(responseValue)) {
      const link = linkHeader(new URL(request.url), responseValue.pagination);
      if (link) set.headers.link = link;
    }
  },
);

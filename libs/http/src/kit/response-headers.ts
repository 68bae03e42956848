// Stage: what every response of a kind carries — a strong ETag on single resources (and 304 to
// a GET whose If-None-Match holds it, contract §24), the Link header on list pages (§22).
import { Elysia } from 'elysia';
import { etagOf, etagOfText, matchesIfNoneMatch } from '../etag.ts';
import { isListPage, linkHeader } from '../lists.ts';

/** A single resource answer `{ data: {...} }` (not a list, not a deletion). */
function singleResource(body: unknown): body is { data: Record<string, unknown> } {
  const data = typeof body === 'object' && body !== null ? (body as { data?: unknown }).data : undefined;
  return typeof data === 'object' && data !== null && !Array.isArray(data);
}

/** Whether `data` is the answer's only key: its JSON text is then `{"data":` + the data's text + `}`. */
function onlyData(body: object): boolean {
  let keys = 0;
  for (const key in body) if (key !== 'data' || ++keys > 1) return false;
  return keys === 1;
}

/** The content type Elysia gives a JSON answer (`Response.json`), kept byte for byte. */
const JSON_CONTENT_TYPE = 'application/json;charset=utf-8';

/**
 * The ETag/Link plugin. A write's ETag is set in `afterHandle`, where the exactly-once stage
 * records it with the answer. A GET of a single resource is answered in `mapResponse`, after
 * the response schema was checked: the data is serialised ONCE, and that text is both hashed for
 * the ETag and sent as the body.
 */
export const responseHeaders = new Elysia({ name: 'crm-response-headers' })
  .onAfterHandle({ as: 'global' }, ({ request, responseValue, set }) => {
    if (singleResource(responseValue)) {
      if (request.method === 'GET') return;
      set.headers.etag = etagOf(responseValue.data);
    } else if (isListPage(responseValue)) {
      const link = linkHeader(new URL(request.url), responseValue.pagination);
      if (link) set.headers.link = link;
    }
  })
  .mapResponse({ as: 'global' }, ({ request, responseValue, set }) => {
    if (request.method !== 'GET' || !singleResource(responseValue)) return;
    const data = JSON.stringify(responseValue.data);
    const etag = etagOfText(data);
    if (matchesIfNoneMatch(request.headers.get('if-none-match'), etag)) return new Response(null, { status: 304, headers: { etag } });
    const body = onlyData(responseValue) ? `{"data":${data}}` : JSON.stringify(responseValue);
    // What the handler set stays (its content type included, as Response.json keeps it).
    const headers = { ...(set.headers as Record<string, string>) };
    headers['content-type'] ??= JSON_CONTENT_TYPE;
    headers.etag = etag;
    return new Response(body, { status: typeof set.status === 'number' ? set.status : 200, headers });
  });

// The headers every /v1 answer carries whoever made it — pipeline error, service, idempotent
// replay, the public OpenAPI document (contract §20) — and the one it never carries.
import { ERROR_TYPE_HEADER } from '@crm/http';
import type { CorsPolicy } from '../cors/cors.ts';

/** Every /v1 answer: per key and possibly personal, so no cache keeps it; never content-sniffed. */
const PUBLIC_HEADERS = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };

/** Sets headers on a response, copying it first when its headers are immutable (a fetched response). */
export function withHeaders(response: Response, headers: Record<string, string>): Response {
  try {
    for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
    return response;
  } catch {
    const copy = new Headers(response.headers);
    for (const [name, value] of Object.entries(headers)) copy.set(name, value);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers: copy });
  }
}

/**
 * PUBLIC_HEADERS and, for an allowed origin, the CORS headers. `X-Error-Type` is removed: it tells
 * the gateway an answer's error type without parsing the body, and is not part of the public API
 * (the type is in the body's `error.type`).
 */
export function withPublicHeaders(request: Request, response: Response, cors: CorsPolicy): Response {
  const target = withHeaders(response, PUBLIC_HEADERS);
  target.headers.delete(ERROR_TYPE_HEADER);
  cors.decorate(request, target.headers);
  return target;
}

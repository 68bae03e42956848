// The headers every /v1 answer carries whoever made it — pipeline error, service, idempotent
// replay, the public OpenAPI document (contract §20) — and the one it never carries.
import { ERROR_TYPE_HEADER } from '@crm/http';
import type { CorsPolicy } from '../cors/cors.ts';

/** Every /v1 answer: per key and possibly personal, so no cache keeps it; never content-sniffed. */
const PUBLIC_HEADERS: Record<string, string> = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };

/** Sets each header of a record (no intermediate arrays). */
export function setHeaders(target: Headers, headers: Record<string, string>): void {
  for (const name in headers) target.set(name, headers[name] as string);
}

/**
 * Sets headers on a response, copying it first when its headers are immutable (a fetched
 * response on a runtime whose fetched headers are, e.g. Deno; the gateway's forward already
 * hands back mutable headers, so the copy is the exception).
 */
export function withHeaders(response: Response, headers: Record<string, string>): Response {
  try {
    setHeaders(response.headers, headers);
    return response;
  } catch {
    const copy = new Headers(response.headers);
    setHeaders(copy, headers);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers: copy });
  }
}

/**
 * PUBLIC_HEADERS and, for an allowed origin, the CORS headers. `X-Error-Type` is removed: it tells
 * the gateway an answer's error type without parsing the body, and is not part of the public API
 * (the type is in the body's `error.type`). `hasErrorType: false` when the caller has already
 * seen the answer carries none.
 */
export function withPublicHeaders(request: Request, response: Response, cors: CorsPolicy, hasErrorType = true): Response {
  const target = withHeaders(response, PUBLIC_HEADERS);
  if (hasErrorType) target.headers.delete(ERROR_TYPE_HEADER);
  if (cors.enabled) cors.decorate(request, target.headers);
  return target;
}

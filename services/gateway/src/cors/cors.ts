/**
 * CORS for browser-based clients (contract §20): an explicit allow-list of origins, off when the
 * list is empty. The API authenticates with the `x-api-key` header, never with cookies, so no
 * `Access-Control-Allow-Credentials` is sent: a page of an allowed origin can call the API only
 * with a key it already holds.
 */

/** Methods a preflight may ask for: every method of the public API. */
export const CORS_ALLOWED_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
/** Request headers a browser may send: the key, the body type and the headers of §6, §8 and §24. */
export const CORS_ALLOWED_HEADERS = ['x-api-key', 'content-type', 'idempotency-key', 'x-request-id', 'if-match', 'if-none-match'];
/** Response headers a script may read besides the CORS-safelisted ones (§6, §7, §8, §22, §24). */
export const CORS_EXPOSED_HEADERS = ['X-Request-ID', 'RateLimit', 'RateLimit-Policy', 'Retry-After', 'Idempotent-Replayed', 'ETag', 'Link'];
/** Seconds a browser may cache a preflight answer. */
export const CORS_MAX_AGE_SECONDS = 600;

/** An origin as browsers serialise it: scheme, host and an optional port, nothing else (no `null`, no `*`). */
export const ORIGIN_PATTERN = 'https?://[^\\s/?#,@]+';
const ORIGIN = new RegExp(`^${ORIGIN_PATTERN}$`);

export interface CorsPolicy {
  /** Whether any origin is allowed at all (false: the gateway sends no CORS header). */
  enabled: boolean;
  /** The 204 answer to a preflight from an allowed origin; undefined for every other request. */
  preflight(request: Request): Response | undefined;
  /** Adds the headers of an actual (non-preflight) response for an allowed origin, in place. */
  decorate(request: Request, headers: Headers): void;
}

/** The origins of CORS_ALLOWED_ORIGINS (comma-separated), normalised; throws on anything that is not an origin. */
export function parseAllowedOrigins(list: string): string[] {
  return list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((value) => {
      if (!ORIGIN.test(value)) throw new Error(`CORS_ALLOWED_ORIGINS: ${JSON.stringify(value)} is not an origin (https://host[:port])`);
      return new URL(value).origin;
    });
}

function appendVary(headers: Headers, name: string): void {
  const vary = headers.get('vary');
  if (!vary) headers.set('vary', name);
  else if (!vary.split(',').some((v) => v.trim().toLowerCase() === name.toLowerCase())) headers.set('vary', `${vary}, ${name}`);
}

/**
 * The CORS policy for a list of allowed origins. A preflight is an OPTIONS request with `Origin`
 * and `Access-Control-Request-Method`; from an allowed origin it is answered here, before the API
 * key is checked (browsers never send credentials on a preflight). From any other origin it is
 * not special: it goes through the pipeline like any OPTIONS request and gets no CORS header.
 */
export function createCorsPolicy({ allowedOrigins = [] as string[] } = {}): CorsPolicy {
  const allowed = new Set(allowedOrigins);
  const allowedOrigin = (request: Request): string | undefined => {
    const origin = request.headers.get('origin');
    return origin !== null && allowed.has(origin) ? origin : undefined;
  };
  const preflightHeaders = {
    'access-control-allow-methods': CORS_ALLOWED_METHODS.join(', '),
    'access-control-allow-headers': CORS_ALLOWED_HEADERS.join(', '),
    'access-control-max-age': String(CORS_MAX_AGE_SECONDS),
  };
  const exposed = CORS_EXPOSED_HEADERS.join(', ');

  return {
    enabled: allowed.size > 0,
    preflight(request) {
      if (request.method !== 'OPTIONS' || !request.headers.has('access-control-request-method')) return undefined;
      const origin = allowedOrigin(request);
      if (origin === undefined) return undefined;
      return new Response(null, {
        status: 204,
        headers: { 'access-control-allow-origin': origin, ...preflightHeaders, vary: 'Origin' },
      });
    },
    decorate(request, headers) {
      if (allowed.size === 0) return;
      // Whatever the origin, the answer depends on it: caches must not hand one origin's answer to another.
      appendVary(headers, 'Origin');
      const origin = allowedOrigin(request);
      if (origin === undefined || headers.has('access-control-allow-origin')) return;
      headers.set('access-control-allow-origin', origin);
      headers.set('access-control-expose-headers', exposed);
    },
  };
}

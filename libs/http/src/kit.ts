import { timingSafeEqual } from 'node:crypto';
import { Elysia } from 'elysia';
import { AppError, errorResponse, unavailableError, validationError } from './errors.ts';
import { etagOf, matchesIfNoneMatch } from './etag.ts';
import { nulErrors, readJsonBody } from './input/json-body.ts';
import { expandUnions, throwIfInvalid } from './input/validate.ts';
import { isListPage, linkHeader } from './lists.ts';
import type { Logger } from './logger.ts';
import { HttpMetrics } from './metrics.ts';
import { type DescribedRoute, describeRoutes } from './openapi.ts';
import { validationDetails } from './validation.ts';

/** Header names shared by the gateway and the services. */
export const headers = {
  tenant: 'x-tenant-id',
  requestId: 'x-request-id',
  internalToken: 'x-internal-token',
} as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The request id rule of contract §6: keep a client UUID, otherwise generate one. */
export function requestIdFrom(value: string | null): string {
  return value && UUID.test(value) ? value : crypto.randomUUID();
}

/** Internal path (behind the internal credential) where every service describes its /v1 routes. */
export const OPENAPI_PATH = '/internal/openapi.json';

interface RequestState {
  requestId: string;
  route?: string;
}

const states = new WeakMap<Request, RequestState>();

/** Sets the metrics/log route label of a request handled outside Elysia's router. */
export function setRouteLabel(request: Request, route: string): void {
  const state = states.get(request);
  if (state) state.route = route;
}

/** The request id assigned to a request by the kit's handler. */
export function requestIdOf(request: Request): string {
  return states.get(request)?.requestId ?? '';
}

/**
 * Request context for route handlers: `requestId` and `tenantId` (from the gateway's
 * headers). Feature plugins `.use()` it for typing; Elysia dedupes it by name.
 */
export const requestContext = new Elysia({ name: 'crm-request-context' }).derive({ as: 'global' }, ({ request, route }) => {
  const state = states.get(request);
  if (state) state.route = route;
  return {
    requestId: state?.requestId ?? '',
    tenantId: request.headers.get(headers.tenant) ?? '',
    /** The client's `If-Match` (contract §24), for the service to compare where it locks the resource. */
    ifMatch: request.headers.get('if-match') ?? undefined,
  };
});

/** A single resource answer `{ data: {...} }` (not a list, not a deletion). */
function singleResource(body: unknown): body is { data: Record<string, unknown> } {
  const data = typeof body === 'object' && body !== null ? (body as { data?: unknown }).data : undefined;
  return typeof data === 'object' && data !== null && !Array.isArray(data);
}

/**
 * Adds what every response of a kind carries: a strong ETag on single resources (and 304 to a
 * GET whose If-None-Match holds it, contract §24), the Link header on list pages (§22).
 */
const responseHeaders = new Elysia({ name: 'crm-response-headers' }).onAfterHandle({ as: 'global' }, ({ request, responseValue, set }) => {
  if (singleResource(responseValue)) {
    const etag = etagOf(responseValue.data);
    set.headers.etag = etag;
    if (request.method === 'GET' && matchesIfNoneMatch(request.headers.get('if-none-match'), etag))
      return new Response(null, { status: 304, headers: { etag } });
  } else if (isListPage(responseValue)) {
    const link = linkHeader(new URL(request.url), responseValue.pagination);
    if (link) set.headers.link = link;
  }
});

export interface ReadinessCheck {
  name: string;
  check: () => Promise<unknown>;
}

export interface ServiceKitOptions {
  service: string;
  logger: Logger;
  /** Shared secret the gateway sends; null disables the guard (the gateway itself). */
  internalToken: string | null;
  readiness?: ReadinessCheck[];
  /** Paths answered without the internal credential. */
  openPaths?: string[];
}

/** Method label values; a runtime that accepts any method token must not grow the series. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Compares a presented credential in constant time (no timing oracle on the internal token). */
function sameSecret(presented: string | null, expected: string): boolean {
  if (presented === null) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Whether a route reads its own body stream (`parse: 'none'`, the multipart uploads). */
function readsRawBody(route: DescribedRoute): boolean {
  const parse = route.hooks?.parse;
  const hooks = Array.isArray(parse) ? parse : [parse];
  return hooks.some((hook) => hook === 'none' || hook?.fn === 'none');
}

async function runChecks(checks: ReadinessCheck[]) {
  const results = await Promise.all(
    checks.map(async ({ name, check }) => {
      try {
        await Promise.race([check(), new Promise((_, reject) => setTimeout(() => reject(new Error('timed out after 2s')), 2000))]);
        return [name, 'ok'] as const;
      } catch (error) {
        return [name, `error: ${error instanceof Error ? error.message : String(error)}`] as const;
      }
    }),
  );
  const ok = results.every(([, r]) => r === 'ok');
  return { ok, body: { status: ok ? 'ok' : 'unavailable', checks: Object.fromEntries(results) } };
}

/**
 * Everything a service shares: request ids, tenant context, the error envelope, the internal
 * credential guard, /livez, /readyz, /metrics, access logs. `plugin` goes first in the app;
 * `handler(app)` wraps the finished app into the fetch function that is served.
 */
export function createServiceKit(options: ServiceKitOptions) {
  const { service, logger, internalToken, readiness = [] } = options;
  const metrics = new HttpMetrics(service);
  const openPaths = new Set(['/livez', '/readyz', '/metrics', ...(options.openPaths ?? [])]);

  // Routes declared with `parse: 'none'` (uploads) read their own body stream; filled by `handler`.
  const rawBodyRoutes = new Set<string>();

  const plugin = new Elysia({ name: `crm-kit-${service}` })
    .use(requestContext)
    .use(responseHeaders)
    // The input boundary (contract §19): strict JSON bodies, and no NUL in any query or path value.
    .onParse({ as: 'global' }, ({ request, contentType, route }) =>
      rawBodyRoutes.has(`${request.method} ${route}`) ? null : readJsonBody(request, contentType),
    )
    // After the route's own checks (which name every failing query field at once), catch the rest.
    .onBeforeHandle({ as: 'global' }, ({ query, params }) => throwIfInvalid([...nulErrors(query), ...nulErrors(params)]))
    .onError({ as: 'global' }, ({ code, error, request }) => {
      const requestId = states.get(request)?.requestId ?? crypto.randomUUID();
      if (error instanceof AppError) return errorResponse(error, requestId);
      if (code === 'VALIDATION') {
        // A path parameter that fails its schema (`/contacts/{id}` with id 0 or 2^31) names no
        // resource: not found. Elysia reports a failed integer coercion of a path id as 'property'.
        const on = (error as { type?: string }).type;
        if (on === 'params' || on === 'property') return errorResponse(new AppError('not_found', 'Not found'), requestId);
        const all = (error as { all?: Parameters<typeof expandUnions>[0] }).all ?? [];
        return errorResponse(validationError(validationDetails(expandUnions(all))), requestId);
      }
      if (code === 'PARSE') {
        // Elysia wraps what a parse hook throws; our JSON reader's own 400/422 is the cause.
        const cause = (error as { cause?: unknown }).cause;
        return errorResponse(cause instanceof AppError ? cause : new AppError('bad_request', 'Malformed JSON body'), requestId);
      }
      if (code === 'NOT_FOUND') return errorResponse(new AppError('not_found', 'No such route'), requestId);
      const unavailable = unavailableError(error);
      if (unavailable) {
        logger.warn('dependency unavailable', { request_id: requestId, error: error instanceof Error ? error.message : String(error) });
        return errorResponse(unavailable, requestId);
      }
      logger.error('unhandled error', { request_id: requestId, error });
      return errorResponse(new AppError('internal_error', 'Internal server error'), requestId);
    })
    .get('/livez', () => ({ status: 'ok' }))
    .get('/readyz', async ({ set }) => {
      const { ok, body } = await runChecks(readiness);
      set.status = ok ? 200 : 503;
      return body;
    })
    .get('/metrics', () => new Response(metrics.render(), { headers: { 'content-type': 'text/plain; version=0.0.4' } }));

  /** Wraps the finished app: request id, internal guard, 405 detection, metrics and access log. */
  function handler(app: { fetch: (r: Request) => Response | Promise<Response>; routes: DescribedRoute[] }) {
    for (const route of app.routes) if (readsRawBody(route)) rawBodyRoutes.add(`${route.method} ${route.path}`);
    const matchers = app.routes.map((r) => ({
      method: r.method,
      regex: new RegExp(
        `^${r.path
          .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
          .replace(/:[^/]+/g, '[^/]+')
          .replace(/\*/g, '.*')}$`,
      ),
    }));
    const allowedMethods = (path: string) => matchers.filter((m) => m.regex.test(path)).map((m) => m.method);

    return async (request: Request): Promise<Response> => {
      const started = performance.now();
      const requestId = requestIdFrom(request.headers.get(headers.requestId));
      const state: RequestState = { requestId };
      states.set(request, state);
      const url = request.url;
      const pathStart = url.indexOf('/', url.indexOf('//') + 2);
      const queryStart = url.indexOf('?', pathStart);
      const path = queryStart === -1 ? url.slice(pathStart) : url.slice(pathStart, queryStart);

      let response: Response;
      if (internalToken !== null && !openPaths.has(path) && !sameSecret(request.headers.get(headers.internalToken), internalToken)) {
        response = errorResponse(new AppError('unauthorized', 'Missing or invalid internal credential'), requestId);
      } else if (internalToken !== null && path.startsWith('/v1/') && !request.headers.get(headers.tenant)) {
        response = errorResponse(new AppError('unauthorized', 'Missing tenant context'), requestId);
      } else if (internalToken !== null && path === OPENAPI_PATH && request.method === 'GET') {
        // The service's public routes as OpenAPI paths; the gateway merges them into /openapi/v1.yaml.
        response = Response.json({ paths: describeRoutes(app.routes) });
      } else {
        try {
          response = await app.fetch(request);
        } catch (error) {
          const unavailable = unavailableError(error);
          if (!unavailable) logger.error('unhandled error', { request_id: requestId, error });
          response = errorResponse(unavailable ?? new AppError('internal_error', 'Internal server error'), requestId);
        }
        if (response.status === 404 && state.route === undefined) {
          const allowed = allowedMethods(path).filter((m) => m !== request.method);
          if (allowed.length > 0 && !allowed.includes('ALL')) {
            response = errorResponse(
              new AppError('method_not_allowed', `${request.method} is not allowed on ${path}`, undefined, {
                allow: [...new Set(allowed)].join(', '),
              }),
              requestId,
            );
          }
        }
      }
      response.headers.set(headers.requestId, requestId);
      const seconds = (performance.now() - started) / 1000;
      const route = state.route ?? (openPaths.has(path) ? path : 'unmatched');
      metrics.observe(KNOWN_METHODS.has(request.method) ? request.method : 'OTHER', route, response.status, seconds);
      if (!openPaths.has(path)) {
        logger.info('request', {
          request_id: requestId,
          tenant_id: request.headers.get(headers.tenant) ?? undefined,
          method: request.method,
          path,
          route,
          status: response.status,
          duration_ms: Math.round(seconds * 1000 * 100) / 100,
        });
      }
      return response;
    };
  }

  return { plugin, handler, metrics };
}

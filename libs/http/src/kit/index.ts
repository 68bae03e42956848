// The service kit: every process's request pipeline, as named stages. Inside Elysia (plugins):
// request context → input boundary → response headers → error mapper → probes. Around Elysia
// (the fetch function that is served): open scope (request id, path) → internal guard →
// OpenAPI description → the app → 405 → request id header → access log and metrics.
import { Elysia } from 'elysia';
import { errorResponse } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { HttpMetrics } from '../metrics.ts';
import { type DescribedRoute, describeRoutes } from '../openapi.ts';
import { accessLog } from './access-log.ts';
import { errorMapper, unexpectedErrorResponse } from './error-mapper.ts';
import { inputBoundary, readsRawBody } from './input-boundary.ts';
import { internalGuard } from './internal-guard.ts';
import { methodNotAllowed } from './method-not-allowed.ts';
import { PROBE_PATHS, probes, type ReadinessCheck } from './probes.ts';
import { headers, openScope, type RequestScope, requestContext } from './request-scope.ts';
import { responseHeaders } from './response-headers.ts';

export type { ReadinessCheck } from './probes.ts';
export { headers, type RequestScope, requestContext, requestIdFrom, requestIdOf, scopeOf, setRouteLabel } from './request-scope.ts';

/** Internal path (behind the internal credential) where every service describes its /v1 routes. */
export const OPENAPI_PATH = '/internal/openapi.json';

export interface ServiceKitOptions {
  service: string;
  logger: Logger;
  /** Shared secret the gateway sends; null disables the guard (the gateway itself). */
  internalToken: string | null;
  readiness?: ReadinessCheck[];
  /** Paths answered without the internal credential. */
  openPaths?: string[];
}

interface ServedApp {
  /** Also given the request's scope: a dispatcher outside Elysia's router (the gateway) reads its id, path and query and sets its route. */
  fetch: (r: Request, scope: RequestScope) => Response | Promise<Response>;
  routes: DescribedRoute[];
}

/**
 * Everything a service shares. `plugin` goes first in the app; `handler(app)` wraps the
 * finished app into the fetch function that is served.
 */
export function createServiceKit(options: ServiceKitOptions) {
  const { service, logger, internalToken, readiness = [] } = options;
  const metrics = new HttpMetrics(service);
  const openPaths = new Set<string>([...PROBE_PATHS, ...(options.openPaths ?? [])]);
  // Routes declared with `parse: 'none'` (uploads) read their own body stream; filled by `handler`.
  const rawBodyRoutes = new Set<string>();

  const plugin = new Elysia({ name: `crm-kit-${service}` })
    .use(requestContext)
    .use(inputBoundary(service, rawBodyRoutes))
    .use(responseHeaders)
    .use(errorMapper(service, logger))
    .use(probes(service, readiness, metrics));

  /** Wraps the finished app into the served fetch function (the stages around Elysia). */
  function handler(app: ServedApp) {
    for (const route of app.routes) if (readsRawBody(route)) rawBodyRoutes.add(`${route.method} ${route.path}`);
    const guard = internalToken === null ? undefined : internalGuard(internalToken, openPaths);
    const notAllowed = methodNotAllowed(app.routes);
    const record = accessLog(metrics, logger, openPaths);

    async function respond(request: Request, scope: RequestScope): Promise<Response> {
      const refused = guard?.(request, scope);
      if (refused) return errorResponse(refused, scope.requestId);
      // The service's public routes as OpenAPI paths; the gateway merges them into /openapi/v1.yaml.
      if (guard && scope.path === OPENAPI_PATH && request.method === 'GET') return Response.json({ paths: describeRoutes(app.routes) });
      let response: Response;
      try {
        response = await app.fetch(request, scope);
      } catch (error) {
        return unexpectedErrorResponse(error, scope.requestId, logger);
      }
      const wrongMethod = response.status === 404 && scope.route === undefined ? notAllowed(request.method, scope.path) : undefined;
      return wrongMethod ? errorResponse(wrongMethod, scope.requestId) : response;
    }

    return async (request: Request): Promise<Response> => {
      const scope = openScope(request);
      let response: Response;
      try {
        response = await respond(request, scope);
      } finally {
        scope.afterResponse?.();
      }
      response.headers.set(headers.requestId, scope.requestId);
      record(request, scope, response.status);
      return response;
    };
  }

  return { plugin, handler, metrics };
}

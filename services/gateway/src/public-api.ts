import { type ServiceName, services } from '@crm/contracts';
import { AppError, errorResponse, requestIdOf, setRouteLabel } from '@crm/http';
import { clientAddress } from '@crm/runtime';
import type { Authenticator } from './auth/authenticate.ts';
import { healthReport, type ServiceUrls } from './health/health.ts';
import { readRequestBody } from './proxy/body.ts';
import { forward } from './proxy/forward.ts';
import { owningService, routeLabel } from './proxy/routing.ts';

export interface PublicApiDeps {
  auth: Authenticator;
  urls: ServiceUrls;
  internalToken: string;
  upstreamTimeoutMs: number;
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/**
 * The /v1 pipeline: authenticate the key, find the owning service, check the body, forward.
 * Every failure becomes the contract's error envelope with the request id.
 */
export function createPublicApi(deps: PublicApiDeps) {
  const local: Record<string, (request: Request) => Promise<Response>> = {
    'GET /v1/health': async () => json(await healthReport(deps.urls)),
  };

  return async function handlePublic(request: Request, path: string, search: string): Promise<Response> {
    const requestId = requestIdOf(request);
    setRouteLabel(request, routeLabel(path));
    try {
      const principal = await deps.auth.authenticate(request.headers.get('x-api-key'));
      if (!principal) throw new AppError('unauthorized', 'Missing or invalid API key (send it in the x-api-key header)');
      const handler = local[`${request.method} ${path}`];
      if (handler) return await handler(request);
      const service: ServiceName | undefined = owningService(path);
      if (!service) throw new AppError('not_found', `No route for ${path}`);
      const body = await readRequestBody(request);
      return await forward({
        request,
        baseUrl: deps.urls[service],
        pathAndQuery: path + search,
        body,
        tenantId: principal.tenantId,
        requestId,
        internalToken: deps.internalToken,
        clientIp: clientAddress(request),
        timeoutMs: deps.upstreamTimeoutMs,
      });
    } catch (error) {
      if (error instanceof AppError) return errorResponse(error, requestId);
      throw error;
    }
  };
}

/** Service base URLs from config. */
export function serviceUrls(config: Record<string, unknown>): ServiceUrls {
  return Object.fromEntries(Object.entries(services).map(([name, s]) => [name, String(config[s.urlEnv])])) as ServiceUrls;
}

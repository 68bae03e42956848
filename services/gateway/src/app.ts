import type { ServiceName } from '@crm/contracts';
import {
  AppError,
  createInternalClient,
  createServiceKit,
  errorResponse,
  type Logger,
  type ReadinessCheck,
  type RequestScope,
  registerCounter,
} from '@crm/http';
import { type Http1Client, http1Client } from '@crm/runtime';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import type { NatsConnection } from 'nats';
import { createAuditRecorder } from './audit/recorder.ts';
import { auditRoutes } from './audit/routes.ts';
import { createAuthenticator } from './auth/authenticate.ts';
import type { GatewayConfig } from './config.ts';
import { createCorsPolicy, parseAllowedOrigins } from './cors/cors.ts';
import type { GatewayDatabase } from './db/database.ts';
import { healthRoutes, type ServiceUrls, serviceUrls } from './health/health.ts';
import { assertHttps, clientIpOf, transportPolicy } from './https/transport.ts';
import { startIdempotencyPurge } from './idempotency/purge.ts';
import { createOpenApiDocument } from './openapi/document.ts';
import { openApiRoutes } from './openapi/routes.ts';
import { openGatewayRequest, targetOf } from './pipeline/context.ts';
import { withPublicHeaders } from './pipeline/headers.ts';
import { createPublicApi } from './pipeline/public-api.ts';
import { owningService, routeLabel } from './proxy/routing.ts';
import { createRateLimiter } from './rate-limit/limiter.ts';
import { startIdleBucketPurge } from './rate-limit/purge.ts';
import { adminRoutes } from './tenants/admin-routes.ts';

export interface GatewayDeps {
  config: GatewayConfig;
  db: Kysely<GatewayDatabase>;
  nc: NatsConnection;
  logger: Logger;
  readiness: ReadinessCheck[];
}

/** Gateway-owned /v1 routes: reached only through the public pipeline (key, limits, audit). */
const LOCAL_ROUTES: Record<string, string[]> = { '/v1/health': ['GET'], '/v1/audit-logs': ['GET'] };
/** Probes stay reachable over plain HTTP for orchestrators even when HTTPS is required. */
const PROBES = new Set(['/livez', '/readyz']);
/** Public under /v1 but served by Elysia without a key (contract §2). */
const OPENAPI_V1 = '/v1/openapi/v1.yaml';

/**
 * The clients that reads and keyed JSON writes to sales, catalog and webhooks go through
 * (`http1`): their answers are JSON of bounded size. Documents' downloads stream files, and the
 * gateway's own client cannot slow a sender down, so they stay with fetch, as do uploads, writes
 * without an Idempotency-Key (which are not safe to send twice), Deno and https upstreams (no
 * client: undefined).
 */
function upstreamClientsFor(urls: ServiceUrls, choice: 'http1' | 'fetch'): Partial<Record<ServiceName, Http1Client>> {
  if (choice === 'fetch') return {};
  const clients: Partial<Record<ServiceName, Http1Client>> = {};
  for (const service of ['sales', 'catalog', 'webhooks'] as const) {
    const client = http1Client(urls[service]);
    if (client) clients[service] = client;
  }
  registerCounter(
    'gateway_upstream_connections_opened_total',
    "Connections the gateway's own HTTP/1.1 client opened to services (kept alive and reused)",
    () => Object.values(clients).reduce((total, client) => total + client.stats().opened, 0),
  );
  registerCounter(
    'gateway_upstream_client_requests_total',
    'Requests the gateway sent to services through its own HTTP/1.1 client (reads and keyed JSON writes; the rest go through fetch)',
    () => Object.values(clients).reduce((total, client) => total + client.stats().requests, 0),
  );
  return clients;
}

/**
 * The gateway: /v1 goes through the public pipeline; /admin, docs and probes through Elysia.
 * `fetch` serves the public port; `opsFetch` the operations port (/metrics, /livez, /readyz).
 */
export function createApp(deps: GatewayDeps) {
  const { config, db, logger } = deps;
  const kit = createServiceKit({ service: 'gateway', logger, internalToken: null, readiness: deps.readiness });
  const urls = serviceUrls(config);
  const sales = createInternalClient({ service: 'sales', baseUrl: urls.sales, token: config.INTERNAL_TOKEN });
  const auth = createAuthenticator(db, deps.nc, config.AUTH_CACHE_MS);
  const limiter = createRateLimiter(db, { coalesceMs: config.RATE_LIMIT_COALESCE_MS, fullBatch: config.RATE_LIMIT_FULL_BATCH });
  const audit = createAuditRecorder(db, logger, {
    flushMs: config.AUDIT_FLUSH_MS,
    batchSize: config.AUDIT_BATCH_SIZE,
    maxBufferedBytes: config.AUDIT_BUFFER_MAX_MB * 1024 * 1024,
  });
  const purges = [
    startIdempotencyPurge(db, logger, config.PURGE_INTERVAL_MS),
    startIdleBucketPurge(limiter, logger, config.PURGE_INTERVAL_MS),
  ];
  const transport = transportPolicy(config);
  const cors = createCorsPolicy({ allowedOrigins: parseAllowedOrigins(config.CORS_ALLOWED_ORIGINS) });

  const app = new Elysia({ normalize: false })
    .use(kit.plugin)
    .use(adminRoutes({ db, nc: deps.nc, sales }, config.ADMIN_TOKEN))
    .use(healthRoutes(urls))
    .use(auditRoutes(db));
  const openapi = createOpenApiDocument({
    urls,
    internalToken: config.INTERNAL_TOKEN,
    logger,
    ownRoutes: () => app.routes.filter((r) => r.path !== OPENAPI_V1),
  });
  app.use(openApiRoutes(openapi.yaml));

  const handlePublic = createPublicApi({
    auth,
    limiter,
    audit,
    db,
    logger,
    transport,
    cors,
    urls,
    upstreamClients: upstreamClientsFor(urls, config.UPSTREAM_READ_CLIENT),
    internalToken: config.INTERNAL_TOKEN,
    upstreamTimeoutMs: config.UPSTREAM_TIMEOUT_MS,
    claimMarginMs: config.IDEMPOTENCY_CLAIM_MARGIN_MS,
    unauthenticatedPerMinute: config.UNAUTHENTICATED_PER_MINUTE,
    localRoutes: LOCAL_ROUTES,
    localFetch: async (request) => app.handle(request),
  });

  /**
   * The gateway's entry, given the kit's scope of the request: its id, and its path and query as
   * the kit parsed them (the URL is parsed once). A /v1 request gets its context here.
   */
  const dispatch = async (request: Request, scope: RequestScope): Promise<Response> => {
    const { requestId, path } = scope;
    if (path.startsWith('/v1/') || path === '/v1') {
      // The document is public; its CORS preflight still goes through the pipeline like every /v1 preflight.
      if (path === OPENAPI_V1 && cors.preflight(request) === undefined) {
        return withPublicHeaders(request, await serveOpen(request, requestId), cors);
      }
      // A bounded metrics label (contract §20): never the raw path of an unknown route.
      const local = LOCAL_ROUTES[path] !== undefined;
      const service = local ? undefined : owningService(path);
      scope.route = local ? path : routeLabel(path, service);
      return handlePublic(openGatewayRequest(request, scope, clientIpOf(request, transport), service));
    }
    // Metrics describe every tenant's traffic: only on the operations port (contract §20).
    if (path === '/metrics') return errorResponse(new AppError('not_found', 'No such route'), requestId);
    return PROBES.has(path) ? app.fetch(request) : serveOpen(request, requestId);
  };

  /** Routes outside the pipeline that still obey REQUIRE_HTTPS: /admin, /openapi, /docs. */
  const serveOpen = async (request: Request, requestId: string): Promise<Response> => {
    try {
      assertHttps(request, transport);
    } catch (error) {
      return errorResponse(error as AppError, requestId);
    }
    return app.fetch(request);
  };

  /** The operations port: plain HTTP for probes and Prometheus, nothing else. */
  const opsFetch = async (request: Request): Promise<Response> => {
    const { path } = targetOf(request.url);
    if (request.method === 'GET' && path === '/metrics') {
      return new Response(kit.metrics.render(), { headers: { 'content-type': 'text/plain; version=0.0.4' } });
    }
    if (request.method === 'GET' && PROBES.has(path)) return app.handle(request);
    return errorResponse(new AppError('not_found', 'The operations port serves /metrics, /livez and /readyz only'), crypto.randomUUID());
  };

  return { app, fetch: kit.handler({ fetch: dispatch, routes: app.routes }), opsFetch, background: [auth, ...purges, audit] };
}

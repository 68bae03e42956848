import {
  type AppError,
  createInternalClient,
  createServiceKit,
  errorResponse,
  type Logger,
  type ReadinessCheck,
  requestIdOf,
} from '@crm/http';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import type { NatsConnection } from 'nats';
import { createAuditRecorder } from './audit/recorder.ts';
import { auditRoutes } from './audit/routes.ts';
import { createAuthenticator } from './auth/authenticate.ts';
import type { GatewayConfig } from './config.ts';
import type { GatewayDatabase } from './db/database.ts';
import { healthRoutes } from './health/health.ts';
import { assertHttps, transportPolicy } from './https/transport.ts';
import { startPurgeJob } from './idempotency/purge.ts';
import { createOpenApiDocument } from './openapi/document.ts';
import { openApiRoutes } from './openapi/routes.ts';
import { createPublicApi, serviceUrls } from './public-api.ts';
import { createRateLimiter } from './rate-limit/limiter.ts';
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
const PROBES = new Set(['/livez', '/readyz', '/metrics']);

function pathOf(url: string): { path: string; search: string } {
  const pathStart = url.indexOf('/', url.indexOf('//') + 2);
  const queryStart = url.indexOf('?', pathStart);
  return queryStart === -1
    ? { path: url.slice(pathStart), search: '' }
    : { path: url.slice(pathStart, queryStart), search: url.slice(queryStart) };
}

/** The gateway: /v1 goes through the public pipeline; /admin, docs, health and metrics through Elysia. */
export function createApp(deps: GatewayDeps) {
  const { config, db, logger } = deps;
  const kit = createServiceKit({ service: 'gateway', logger, internalToken: null, readiness: deps.readiness });
  const urls = serviceUrls(config);
  const sales = createInternalClient({ service: 'sales', baseUrl: urls.sales, token: config.INTERNAL_TOKEN });
  const auth = createAuthenticator(db, deps.nc, config.AUTH_CACHE_MS);
  const limiter = createRateLimiter(db);
  const audit = createAuditRecorder(db, logger, { flushMs: config.AUDIT_FLUSH_MS, batchSize: config.AUDIT_BATCH_SIZE });
  const purge = startPurgeJob(db, limiter, logger, config.PURGE_INTERVAL_MS);
  const transport = transportPolicy(config);

  const app = new Elysia({ normalize: false })
    .use(kit.plugin)
    .use(adminRoutes({ db, nc: deps.nc, sales }, config.ADMIN_TOKEN))
    .use(healthRoutes(urls))
    .use(auditRoutes(db));
  const openapi = createOpenApiDocument({
    urls,
    internalToken: config.INTERNAL_TOKEN,
    logger,
    ownRoutes: () => app.routes.filter((r) => r.path !== '/v1/openapi/v1.yaml'),
  });
  app.use(openApiRoutes(openapi.yaml));

  const handlePublic = createPublicApi({
    auth,
    limiter,
    audit,
    db,
    logger,
    transport,
    urls,
    internalToken: config.INTERNAL_TOKEN,
    upstreamTimeoutMs: config.UPSTREAM_TIMEOUT_MS,
    claimMarginMs: config.IDEMPOTENCY_CLAIM_MARGIN_MS,
    unauthenticatedPerMinute: config.UNAUTHENTICATED_PER_MINUTE,
    localRoutes: LOCAL_ROUTES,
    localFetch: async (request) => app.handle(request),
  });

  const dispatch = (request: Request): Response | Promise<Response> => {
    const { path, search } = pathOf(request.url);
    if ((path.startsWith('/v1/') || path === '/v1') && path !== '/v1/openapi/v1.yaml') return handlePublic(request, path, search);
    if (!PROBES.has(path)) {
      try {
        assertHttps(request, transport);
      } catch (error) {
        return errorResponse(error as AppError, requestIdOf(request));
      }
    }
    return app.fetch(request);
  };

  return { app, fetch: kit.handler({ fetch: dispatch, routes: app.routes }), background: [auth, purge, audit] };
}

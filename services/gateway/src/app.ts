import { createInternalClient, createServiceKit, type Logger, type ReadinessCheck } from '@crm/http';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import type { NatsConnection } from 'nats';
import { createAuthenticator } from './auth/authenticate.ts';
import type { GatewayConfig } from './config.ts';
import type { GatewayDatabase } from './db/database.ts';
import { createPublicApi, serviceUrls } from './public-api.ts';
import { adminRoutes } from './tenants/admin-routes.ts';

export interface GatewayDeps {
  config: GatewayConfig;
  db: Kysely<GatewayDatabase>;
  nc: NatsConnection;
  logger: Logger;
  readiness: ReadinessCheck[];
}

/** The gateway: /v1 goes through the public pipeline; /admin, health and metrics through Elysia. */
export function createApp(deps: GatewayDeps) {
  const { config } = deps;
  const kit = createServiceKit({ service: 'gateway', logger: deps.logger, internalToken: null, readiness: deps.readiness });
  const urls = serviceUrls(config);
  const sales = createInternalClient({ service: 'sales', baseUrl: urls.sales, token: config.INTERNAL_TOKEN });
  const auth = createAuthenticator(deps.db, deps.nc, config.AUTH_CACHE_MS);
  const handlePublic = createPublicApi({ auth, urls, internalToken: config.INTERNAL_TOKEN, upstreamTimeoutMs: config.UPSTREAM_TIMEOUT_MS });

  const app = new Elysia({ normalize: false }).use(kit.plugin).use(adminRoutes({ db: deps.db, nc: deps.nc, sales }, config.ADMIN_TOKEN));

  const dispatch = (request: Request): Response | Promise<Response> => {
    const url = request.url;
    const pathStart = url.indexOf('/', url.indexOf('//') + 2);
    const queryStart = url.indexOf('?', pathStart);
    const path = queryStart === -1 ? url.slice(pathStart) : url.slice(pathStart, queryStart);
    if (path.startsWith('/v1/') || path === '/v1') return handlePublic(request, path, queryStart === -1 ? '' : url.slice(queryStart));
    return app.fetch(request);
  };

  return { app, fetch: kit.handler({ fetch: dispatch, routes: app.routes }), background: [auth] };
}

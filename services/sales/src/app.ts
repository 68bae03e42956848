import { createServiceKit, type InternalClient, type Logger, type ReadinessCheck } from '@crm/http';
import { exactlyOnce } from '@crm/idempotency';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import { contactTypesRoutes } from './contact-types/routes.ts';
import { contactsRoutes } from './contacts/routes.ts';
import type { SalesDatabase } from './db/database.ts';
import { opportunitiesRoutes } from './opportunities/routes.ts';
import { ordersRoutes } from './orders/routes.ts';
import { usersRoutes } from './users/routes.ts';

export interface SalesDeps {
  db: Kysely<SalesDatabase>;
  logger: Logger;
  internalToken: string;
  readiness: ReadinessCheck[];
  /** Client of the catalog's /internal API (order lines are priced from it). */
  catalog: InternalClient;
}

/** The sales HTTP app: public /v1 routes the gateway forwards and /internal routes for other services. */
export function createApp(deps: SalesDeps) {
  const kit = createServiceKit({ service: 'sales', logger: deps.logger, internalToken: deps.internalToken, readiness: deps.readiness });
  const app = new Elysia({ normalize: false })
    .use(kit.plugin)
    .use(exactlyOnce(deps.db))
    .use(usersRoutes(deps.db))
    .use(contactTypesRoutes(deps.db))
    .use(contactsRoutes(deps.db))
    .use(opportunitiesRoutes(deps.db))
    .use(ordersRoutes({ db: deps.db, catalog: deps.catalog }));
  return { app, fetch: kit.handler(app) };
}

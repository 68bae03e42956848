import { createServiceKit, type Logger, type ReadinessCheck } from '@crm/http';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import { categoryRoutes } from './categories/routes.ts';
import type { CatalogDatabase } from './db/database.ts';
import { internalRoutes } from './internal/routes.ts';
import { productRoutes } from './products/routes.ts';

export interface CatalogDeps {
  db: Kysely<CatalogDatabase>;
  logger: Logger;
  internalToken: string;
  readiness: ReadinessCheck[];
}

/** The catalog HTTP app: public /v1 product and category routes plus /internal routes for sales. */
export function createApp(deps: CatalogDeps) {
  const kit = createServiceKit({ service: 'catalog', logger: deps.logger, internalToken: deps.internalToken, readiness: deps.readiness });
  const app = new Elysia({ normalize: false })
    .use(kit.plugin)
    .use(categoryRoutes(deps.db))
    .use(productRoutes(deps.db))
    .use(internalRoutes(deps.db));
  return { app, fetch: kit.handler(app) };
}

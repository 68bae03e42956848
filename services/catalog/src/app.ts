import { createServiceKit, type Logger, type ReadinessCheck } from '@crm/http';
import { exactlyOnce } from '@crm/idempotency';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import { productCategoriesRoutes } from './categories/routes.ts';
import type { CatalogDatabase } from './db/database.ts';
import { internalRoutes } from './internal/routes.ts';
import { productsRoutes } from './products/routes.ts';

export interface CatalogDeps {
  db: Kysely<CatalogDatabase>;
  logger: Logger;
  internalToken: string;
  readiness: ReadinessCheck[];
}

/**
 * The catalog HTTP app: public /v1 product and category routes plus /internal routes for sales.
 * Every write is exactly-once under an Idempotency-Key (contract §21); the internal lookup only reads.
 */
export function createApp(deps: CatalogDeps) {
  const kit = createServiceKit({ service: 'catalog', logger: deps.logger, internalToken: deps.internalToken, readiness: deps.readiness });
  const app = new Elysia({ normalize: false })
    .use(kit.plugin)
    .use(exactlyOnce(deps.db))
    .use(productCategoriesRoutes(deps.db))
    .use(productsRoutes(deps.db))
    .use(internalRoutes(deps.db));
  return { app, fetch: kit.handler(app) };
}

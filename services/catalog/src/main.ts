import { loadOrExit, runService } from '@crm/boot';
import { startIdempotencyPurge } from '@crm/idempotency';
import { createApp } from './app.ts';
import { loadCatalogConfig } from './config.ts';
import type { CatalogDatabase } from './db/database.ts';
import { migrations } from './db/migrations/index.ts';

const config = loadOrExit('catalog', () => loadCatalogConfig());

await runService<CatalogDatabase>({
  name: 'catalog',
  schema: 'catalog',
  port: config.CATALOG_PORT,
  config,
  migrations,
  relay: true,
  async start({ db, logger, readiness }) {
    const { fetch } = createApp({ db, logger, internalToken: config.INTERNAL_TOKEN, readiness });
    const purge = startIdempotencyPurge(db, logger);
    return { fetch, background: [purge] };
  },
});

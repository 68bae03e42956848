import { loadOrExit, runService } from '@crm/boot';
import { createInternalClient } from '@crm/http';
import { startIdempotencyPurge } from '@crm/idempotency';
import { createApp } from './app.ts';
import { loadSalesConfig } from './config.ts';
import type { SalesDatabase } from './db/database.ts';
import { migrations } from './db/migrations/index.ts';

const config = loadOrExit('sales', () => loadSalesConfig());

await runService<SalesDatabase>({
  name: 'sales',
  schema: 'sales',
  port: config.SALES_PORT,
  config,
  migrations,
  relay: true,
  async start({ db, logger, readiness }) {
    const catalog = createInternalClient({ service: 'catalog', baseUrl: config.CATALOG_URL, token: config.INTERNAL_TOKEN });
    const { fetch } = createApp({ db, logger, internalToken: config.INTERNAL_TOKEN, readiness, catalog });
    // Exactly-once records (contract §21) live as long as the gateway's own: 24 h, then purged.
    const purge = startIdempotencyPurge(db, logger);
    return { fetch, background: [purge] };
  },
});

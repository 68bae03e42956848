import { loadOrExit, runService } from '@crm/boot';
import { createApp } from './app.ts';
import { loadWebhooksConfig } from './config.ts';
import type { WebhooksDatabase } from './db/database.ts';
import { migrations } from './db/migrations/index.ts';

const config = loadOrExit('webhooks', () => loadWebhooksConfig());

await runService<WebhooksDatabase>({
  name: 'webhooks',
  schema: 'webhooks',
  port: config.WEBHOOKS_PORT,
  config,
  migrations,
  relay: true,
  async start({ db, logger, readiness }) {
    const { fetch } = createApp({ db, logger, internalToken: config.INTERNAL_TOKEN, readiness });
    return { fetch };
  },
});

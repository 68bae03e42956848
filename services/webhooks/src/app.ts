import { createServiceKit, type Logger, type ReadinessCheck } from '@crm/http';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import type { WebhooksDatabase } from './db/database.ts';

export interface WebhooksDeps {
  db: Kysely<WebhooksDatabase>;
  logger: Logger;
  internalToken: string;
  readiness: ReadinessCheck[];
}

/** The webhooks HTTP app. */
export function createApp(deps: WebhooksDeps) {
  const kit = createServiceKit({ service: 'webhooks', logger: deps.logger, internalToken: deps.internalToken, readiness: deps.readiness });
  const app = new Elysia({ normalize: false }).use(kit.plugin);
  return { app, fetch: kit.handler(app) };
}

import { createServiceKit, type Logger, type ReadinessCheck } from '@crm/http';
import { exactlyOnce } from '@crm/idempotency';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import type { WebhooksDatabase } from './db/database.ts';
import { deliveriesRoutes } from './deliveries/routes.ts';
import { webhooksRoutes } from './endpoints/routes.ts';
import { eventsRoutes } from './feed/routes.ts';
import type { Watermark } from './feed/watermark.ts';
import type { TargetPolicy } from './ssrf/target-guard.ts';

export interface WebhooksDeps {
  db: Kysely<WebhooksDatabase>;
  logger: Logger;
  internalToken: string;
  readiness: ReadinessCheck[];
  /** Where webhooks may point and connect (contract §20; WEBHOOK_ALLOWED_NETS for development and tests only). */
  targetPolicy: TargetPolicy;
  /** Wakes the local delivery worker when a delivery is queued by a request. */
  onQueued?: () => void;
  /** The events feed's watermark: the highest stream sequence it may list (contract §25). */
  watermark: Watermark;
  /** How long events are kept (for the feed's description). */
  retentionDays: number;
}

/**
 * The webhooks HTTP app: endpoint management and the delivery log under /v1/webhooks, the events
 * feed under /v1/events. Every write is exactly-once under an Idempotency-Key (contract §21).
 */
export function createApp(deps: WebhooksDeps) {
  const kit = createServiceKit({ service: 'webhooks', logger: deps.logger, internalToken: deps.internalToken, readiness: deps.readiness });
  const routesDeps = { db: deps.db, targetPolicy: deps.targetPolicy, onQueued: deps.onQueued ?? (() => {}) };
  const app = new Elysia({ normalize: false })
    .use(kit.plugin)
    .use(exactlyOnce(deps.db))
    .use(webhooksRoutes(routesDeps))
    .use(deliveriesRoutes(routesDeps))
    .use(eventsRoutes({ db: deps.db, watermark: deps.watermark, retentionDays: deps.retentionDays }));
  return { app, fetch: kit.handler(app) };
}

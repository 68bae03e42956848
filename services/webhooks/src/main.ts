import { loadOrExit, runService } from '@crm/boot';
import { startIdempotencyPurge } from '@crm/idempotency';
import { createApp } from './app.ts';
import { loadWebhooksConfig, retryScheduleMs } from './config.ts';
import type { WebhooksDatabase } from './db/database.ts';
import { migrations } from './db/migrations/index.ts';
import { startEventPurge } from './feed/purge.ts';
import { consumerWatermark } from './feed/watermark.ts';
import { INGEST_DURABLE, startEventIngest } from './ingest/consumer.ts';
import { createTargetPolicy } from './ssrf/target-guard.ts';
import { startDeliveryWorker } from './worker/delivery-worker.ts';

const config = loadOrExit('webhooks', () => loadWebhooksConfig());
const targetPolicy = loadOrExit('webhooks', () => createTargetPolicy(config));

await runService<WebhooksDatabase>({
  name: 'webhooks',
  schema: 'webhooks',
  port: config.WEBHOOKS_PORT,
  config,
  migrations,
  relay: true,
  async start({ db, nc, logger, readiness }) {
    if (config.WEBHOOK_ALLOWED_NETS !== '') {
      logger.warn('WEBHOOK_ALLOWED_NETS is set: webhooks may target these non-public networks (development and tests only)', {
        allowed_nets: config.WEBHOOK_ALLOWED_NETS,
      });
    }
    const worker = startDeliveryWorker({
      db,
      logger,
      targetPolicy,
      retryScheduleMs: retryScheduleMs(config.WEBHOOK_RETRY_SCHEDULE),
      jitter: config.WEBHOOK_RETRY_JITTER,
      timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      concurrency: config.WEBHOOK_CONCURRENCY,
      pollMs: config.WEBHOOK_POLL_MS,
    });
    const ingest = startEventIngest({
      db,
      nc,
      stream: config.EVENTS_STREAM,
      subjectPrefix: config.EVENTS_SUBJECT_PREFIX,
      logger,
      concurrency: config.WEBHOOK_INGEST_CONCURRENCY,
      onQueued: worker.wake,
    });
    const purge = startEventPurge({
      db,
      logger,
      retentionDays: config.EVENTS_RETENTION_DAYS,
      intervalMs: config.EVENTS_PURGE_INTERVAL_MS,
      batchSize: config.EVENTS_PURGE_BATCH,
    });
    const watermark = consumerWatermark({
      nc,
      stream: config.EVENTS_STREAM,
      durable: INGEST_DURABLE,
      refreshMs: config.EVENTS_WATERMARK_REFRESH_MS,
      logger,
    });
    const { fetch } = createApp({
      db,
      logger,
      internalToken: config.INTERNAL_TOKEN,
      readiness,
      targetPolicy,
      onQueued: worker.wake,
      watermark,
      retentionDays: config.EVENTS_RETENTION_DAYS,
    });
    const recordPurge = startIdempotencyPurge(db, logger);
    return { fetch, background: [ingest, worker, purge, recordPurge] };
  },
});

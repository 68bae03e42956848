import { commonServiceEnv, loadConfig, Port, Type } from '@crm/config';

export const WebhooksEnv = Type.Object({
  ...commonServiceEnv,
  WEBHOOKS_PORT: Port(8084),
  NODE_ENV: Type.String({ default: 'development' }),
  WEBHOOK_ALLOWED_NETS: Type.String({
    default: '',
    description: 'DEVELOPMENT AND TESTS ONLY: comma-separated CIDRs webhooks may target although not global unicast',
  }),
  WEBHOOK_TEST_HOSTS_FILE: Type.String({
    default: '',
    description: 'TESTS ONLY (refused when NODE_ENV=production): a hosts file answering for names under .test',
  }),
  WEBHOOK_RETRY_SCHEDULE: Type.String({
    pattern: '^\\s*\\d+(\\.\\d+)?\\s*(,\\s*\\d+(\\.\\d+)?\\s*)*$',
    default: '5,300,1800,7200,18000,36000,36000',
    description: 'Seconds to wait before each retry after a failed attempt (contract §16); its length is the number of retries',
  }),
  WEBHOOK_RETRY_JITTER: Type.Number({ minimum: 0, maximum: 1, default: 0.2, description: 'Random ± fraction applied to each retry delay' }),
  WEBHOOK_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 10_000, description: 'Per-attempt timeout (connect + response)' }),
  WEBHOOK_CONCURRENCY: Type.Integer({ minimum: 1, default: 32, description: 'Deliveries in flight per webhooks process' }),
  WEBHOOK_INGEST_CONCURRENCY: Type.Integer({
    minimum: 1,
    default: 8,
    description: 'Batches of events the JetStream consumer stores at the same time (each batch one statement; at most 2 are used)',
  }),
  WEBHOOK_POLL_MS: Type.Integer({ minimum: 10, default: 500, description: 'How often the delivery worker looks for due tasks when idle' }),
  EVENTS_RETENTION_DAYS: Type.Integer({
    minimum: 1,
    maximum: 36_500,
    default: 30,
    description: 'Days an event is kept (the events feed, the delivery log, manual retries); older ones are purged (contract §25)',
  }),
  EVENTS_PURGE_INTERVAL_MS: Type.Integer({ minimum: 100, default: 600_000, description: 'How often the retention purge runs' }),
  EVENTS_PURGE_BATCH: Type.Integer({ minimum: 1, maximum: 100_000, default: 1000, description: 'Events deleted per purge statement' }),
  EVENTS_WATERMARK_REFRESH_MS: Type.Integer({
    minimum: 0,
    maximum: 5000,
    default: 150,
    description: "How long the events feed reuses the ingest consumer's ack floor (its watermark) before asking NATS again",
  }),
});

export type WebhooksConfig = ReturnType<typeof loadWebhooksConfig>;

/** Webhooks configuration, parsed once from the environment. */
export const loadWebhooksConfig = (env: Record<string, string | undefined> = process.env) => loadConfig(WebhooksEnv, env);

/** The retry schedule in milliseconds, from `WEBHOOK_RETRY_SCHEDULE` (seconds, comma-separated). */
export function retryScheduleMs(schedule: string): number[] {
  return schedule.split(',').map((s) => Math.round(Number(s.trim()) * 1000));
}

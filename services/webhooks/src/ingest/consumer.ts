import type { EventEnvelope } from '@crm/contracts';
import { PoisonMessageError, startConsumer } from '@crm/events';
import type { Logger } from '@crm/http';
import type { Kysely } from 'kysely';
import type { NatsConnection } from 'nats';
import type { WebhooksDatabase } from '../db/database.ts';
import { storeEventWithTasks } from './event-store.ts';

export interface EventIngestOptions {
  db: Kysely<WebhooksDatabase>;
  nc: NatsConnection;
  stream: string;
  subjectPrefix: string;
  logger: Logger;
  /** Events stored at the same time (their transactions share commits); delivery order is best-effort anyway. */
  concurrency: number;
  /** Called after a commit that queued tasks, so the local worker starts at once. */
  onQueued: () => void;
}

/**
 * The durable `webhooks` JetStream consumer: every event is stored with its delivery tasks in
 * one transaction and only then acked, so a crash before the ack leads to a redelivery that
 * the event's primary key turns into a no-op.
 */
export function startEventIngest(options: EventIngestOptions) {
  const { db, logger, onQueued } = options;
  return startConsumer({
    nc: options.nc,
    stream: options.stream,
    subjectPrefix: options.subjectPrefix,
    durable: 'webhooks',
    logger,
    concurrency: options.concurrency,
    async handle(event: EventEnvelope) {
      if (typeof event?.id !== 'string' || typeof event.tenant_id !== 'string' || typeof event.type !== 'string') {
        throw new PoisonMessageError('event envelope lacks id, tenant_id or type');
      }
      const queued = await storeEventWithTasks(db, event);
      if (queued > 0) onQueued();
    },
  });
}

import { type EventEnvelope, eventPayloadErrors, isEventType } from '@crm/contracts';
import { PoisonMessageError, startConsumer } from '@crm/events';
import { isDateTime, type Logger } from '@crm/http';
import type { Kysely } from 'kysely';
import type { NatsConnection } from 'nats';
import type { WebhooksDatabase } from '../db/database.ts';
import { isStorableText, storableJson } from '../db/storable.ts';
import { type StorableEvent, storeEventsWithTasks, storeEventWithTasks } from './event-store.ts';

export interface EventIngestOptions {
  db: Kysely<WebhooksDatabase>;
  nc: NatsConnection;
  stream: string;
  subjectPrefix: string;
  logger: Logger;
  /**
   * Batches stored at the same time, at most 2 (each batch is one statement on one pool connection;
   * more would only queue for the pool); delivery order is best-effort anyway.
   */
  concurrency: number;
  /** Called after a commit that queued tasks, so the local worker starts at once. */
  onQueued: () => void;
}

/** The durable consumer's name; its ack floor is the events feed's watermark (`src/feed/watermark.ts`). */
export const INGEST_DURABLE = 'webhooks';

/** The longest event id, tenant id or event type stored (the `events` table's CHECK constraints agree). */
export const MAX_ENVELOPE_TEXT = 255;

/** Why an envelope can never be stored, or undefined when it can. */
export function envelopeProblem(event: unknown): string | undefined {
  if (typeof event !== 'object' || event === null) return 'event envelope is not an object';
  const envelope = event as Record<string, unknown>;
  for (const field of ['id', 'tenant_id', 'type'] as const) {
    const value = envelope[field];
    if (typeof value !== 'string' || value.length === 0) return `event envelope lacks ${field}`;
    if (value.length > MAX_ENVELOPE_TEXT) return `event envelope ${field} is longer than ${MAX_ENVELOPE_TEXT} characters`;
    if (!isStorableText(value)) return `event envelope ${field} holds U+0000 or an unpaired surrogate`;
  }
  if (typeof envelope.occurred_at !== 'string' || !isDateTime(envelope.occurred_at))
    return 'event envelope occurred_at is not an RFC 3339 timestamp';
  return undefined;
}

/**
 * Why a payload does not conform to its event type's schema (`eventPayloads` of @crm/contracts),
 * or undefined when it does. Checked on the payload as it would be stored and delivered (after the
 * U+FFFD repair), so a receiver never gets data its type's schema does not describe.
 */
export function payloadProblem(type: string, data: unknown): string | undefined {
  if (!isEventType(type)) return `event type ${type} is not a published event type`;
  const errors = eventPayloadErrors(type, data);
  return errors.length === 0 ? undefined : `event payload does not match the ${type} schema: ${errors.join('; ')}`;
}

// SQLSTATE classes of errors that the same event would hit again on every redelivery: data
// exceptions (22: bad timestamp, bad JSON text…), program limits (54: JSON nested too deep), and
// a CHECK or NOT NULL constraint (23514, 23502).
const PERMANENT = (code: unknown) => typeof code === 'string' && (/^(22|54)/.test(code) || code === '23514' || code === '23502');

/**
 * The durable `webhooks` JetStream consumer: every event is stored with its delivery tasks in
 * one transaction and only then acked, so a crash before the ack leads to a redelivery that
 * the event's primary key turns into a no-op.
 *
 * A payload that does not match its type's schema (or an unknown type) is terminated with a log
 * line rather than stored and delivered: consumers act only on events the contract describes.
 *
 * Events come from our own services, whose input boundary refuses NUL, but the stream may hold
 * older events or events from internal paths: a payload string PostgreSQL cannot store (U+0000,
 * an unpaired surrogate) is stored and delivered with U+FFFD in its place (logged); an envelope
 * that can never be stored is terminated with a log line, never redelivered in a loop.
 */
export function startEventIngest(options: EventIngestOptions) {
  const { db, logger, onQueued } = options;

  /**
   * The event as stored, or a PoisonMessageError saying why it can never be stored. In a batch
   * (`inBatch`), a payload that needs repair throws instead: the batch falls back to `handle`,
   * which logs the repair once.
   */
  function prepare(event: EventEnvelope, seq: number, inBatch: boolean): StorableEvent {
    const problem = envelopeProblem(event);
    if (problem) throw new PoisonMessageError(problem);
    let storable: ReturnType<typeof storableJson>;
    try {
      storable = storableJson(event.data ?? null);
    } catch (error) {
      throw new PoisonMessageError(`event payload cannot be read: ${String(error)}`);
    }
    const data = storable.value;
    if (storable.repaired) {
      if (inBatch) throw new Error('a payload needs repair');
      logger.warn('event payload held text PostgreSQL cannot store (U+0000 or an unpaired surrogate); stored with U+FFFD', {
        event_id: event.id,
        type: event.type,
      });
    }
    const nonConforming = payloadProblem(event.type, data);
    if (nonConforming) throw new PoisonMessageError(nonConforming);
    return { ...event, occurred_at: new Date(event.occurred_at).toISOString(), data, seq };
  }

  return startConsumer({
    nc: options.nc,
    stream: options.stream,
    subjectPrefix: options.subjectPrefix,
    durable: INGEST_DURABLE,
    logger,
    concurrency: Math.min(options.concurrency, 2),
    // Every event received while the previous batch was being stored goes into ONE statement (one
    // commit), acked after it; a batch with an event that cannot be stored as it is (poison, a
    // repaired payload, a stream sequence taken) is handled one event at a time by `handle`.
    async handleBatch(items) {
      const events = items.map(({ event, seq }) => prepare(event, seq, true));
      if ((await storeEventsWithTasks(db, events)) > 0) onQueued();
    },
    async handle(event: EventEnvelope, message) {
      const envelope = prepare(event, message.seq, false);
      let queued: number;
      try {
        queued = await storeEventWithTasks(db, envelope, message.seq);
      } catch (error) {
        if (PERMANENT((error as { code?: unknown }).code)) throw new PoisonMessageError(`event cannot be stored: ${String(error)}`);
        throw error;
      }
      if (queued > 0) onQueued();
    },
  });
}

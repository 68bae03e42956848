import type { EventEnvelope } from '@crm/contracts';
import {
  AckPolicy,
  type ConsumerConfig,
  DeliverPolicy,
  type JetStreamManager,
  JSONCodec,
  type JsMsg,
  type NatsConnection,
  nanos,
} from 'nats';
import type { Logger } from './logger.ts';
import { ensureStream, isNotFound } from './nats.ts';

/** Throw from a handler when a retry later may succeed (a dependency is down): the message is nak'ed with a delay. */
export class TransientError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs = 2000,
  ) {
    super(message);
    this.name = 'TransientError';
  }
}

/** Throw from a handler when the message can never be processed: it is terminated, not redelivered. */
export class PoisonMessageError extends Error {
  override name = 'PoisonMessageError';
}

export interface ConsumerOptions {
  nc: NatsConnection;
  stream: string;
  subjectPrefix: string;
  durable: string;
  /** Subject filter below the prefix, e.g. `contact.deleted`; default all events. */
  filter?: string;
  /** Handles one event; `message.seq` is its position in the stream (JetStream stream sequence). */
  handle: (event: EventEnvelope, message: { seq: number; subject: string }) => Promise<void>;
  logger: Logger;
  /** After this many deliveries an unexpected error terminates the message instead of retrying. */
  maxDeliveries?: number;
  /**
   * Messages handled at the same time (default 1: strictly one after another). More lets the
   * database group commits when each message is its own transaction; order becomes best-effort.
   */
  concurrency?: number;
  /** Replicas of the stream when this consumer has to create it; default: what the process configured at boot. */
  replicas?: number;
  /**
   * Handles several events at once (one transaction), then they are all acked. Messages are
   * grouped without waiting: a batch takes every message received and not yet handled (up to
   * `maxBatch`), and up to `concurrency` batches run at the same time. When it throws, the
   * batch's events go through `handle` one by one (which decides ack, nak or term for each), so
   * one bad event never holds back the others.
   */
  handleBatch?: (items: ConsumedEvent[]) => Promise<void>;
  /** The most events in one batch (default 64, the size of a pull). */
  maxBatch?: number;
}

/** An event with its stream position, as given to `handleBatch`. */
export interface ConsumedEvent {
  event: EventEnvelope;
  seq: number;
  subject: string;
}

/** The configuration of a durable pull consumer with explicit acks, from the first message of the stream. */
export function durableConfig(durable: string, filterSubject: string): Partial<ConsumerConfig> & { durable_name: string } {
  return {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    filter_subject: filterSubject,
    ack_wait: nanos(30_000),
    max_deliver: -1,
  };
}

/** Settings the server changes in place; `deliver_policy` only matters when a consumer is created. */
const updatableConsumerSettings = ['filter_subject', 'ack_wait', 'max_deliver', 'max_ack_pending'] as const;
const fixedConsumerSettings = ['ack_policy'] as const;

export type EnsureConsumerResult =
  | { action: 'created' }
  | { action: 'unchanged' }
  | { action: 'updated'; changed: string[] }
  | { action: 'recreated'; changed: string[]; fromSeq: number };

/**
 * Makes a durable consumer exist with `wanted`: created when missing; when its settings differ
 * (filter subject, ack wait, max deliveries, max ack pending), updated in place. A difference the
 * server cannot apply in place (the ack policy, or a filter change on a server older than 2.10) is
 * applied by recreating the consumer from the first message it has not acknowledged, so no event
 * is skipped (the ones in flight may be delivered again: at-least-once).
 */
export async function ensureConsumer(
  jsm: JetStreamManager,
  stream: string,
  wanted: Partial<ConsumerConfig> & { durable_name: string },
  logger?: Logger,
): Promise<EnsureConsumerResult> {
  const durable = wanted.durable_name;
  let info: Awaited<ReturnType<JetStreamManager['consumers']['info']>>;
  try {
    info = await jsm.consumers.info(stream, durable);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    try {
      await jsm.consumers.add(stream, wanted);
      return { action: 'created' };
    } catch (addError) {
      // Another replica created it at the same moment: check it like an existing one.
      if (!(addError instanceof Error && /already (in use|exists)|exists/.test(addError.message))) throw addError;
      info = await jsm.consumers.info(stream, durable);
    }
  }
  const current = info.config;
  const differs = (key: keyof ConsumerConfig) => wanted[key] !== undefined && current[key] !== wanted[key];
  const changed: string[] = updatableConsumerSettings.filter(differs);
  const fixed: string[] = fixedConsumerSettings.filter(differs);
  if (changed.length === 0 && fixed.length === 0) return { action: 'unchanged' };
  const describe = (keys: string[]) =>
    keys.map(
      (key) => `${key}: ${JSON.stringify(current[key as keyof ConsumerConfig])} → ${JSON.stringify(wanted[key as keyof ConsumerConfig])}`,
    );
  if (fixed.length === 0) {
    try {
      await jsm.consumers.update(stream, durable, Object.fromEntries(changed.map((key) => [key, wanted[key as keyof ConsumerConfig]])));
      logger?.warn('durable consumer configuration updated', { stream, durable, changed: describe(changed) });
      return { action: 'updated', changed };
    } catch (error) {
      logger?.warn('durable consumer cannot be updated in place; recreating it from its acknowledged position', {
        stream,
        durable,
        changed: describe(changed),
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  // Everything up to the ack floor is handled; start the new consumer right after it.
  const fromSeq = info.ack_floor.stream_seq + 1;
  await jsm.consumers.delete(stream, durable);
  await jsm.consumers.add(stream, { ...wanted, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: fromSeq });
  const all = [...fixed, ...changed];
  logger?.warn('durable consumer recreated with its new configuration', { stream, durable, changed: describe(all), from_seq: fromSeq });
  return { action: 'recreated', changed: all, fromSeq };
}

const codec = JSONCodec<EventEnvelope>();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How many messages a pull asks for (and the default batch limit). */
const PULL_SIZE = 64;

/**
 * Runs a durable JetStream consumer with explicit ack: ack on success, nak with delay on
 * transient errors, term on poison messages; the consume loop restarts after any failure
 * (NATS restart, consumer deleted). With `handleBatch`, the messages received while earlier
 * ones are being handled are handled together, and acked only after their batch is done.
 */
export function startConsumer(options: ConsumerOptions) {
  const { nc, stream, subjectPrefix, durable, filter = '>', handle, logger, maxDeliveries = 20, concurrency = 1 } = options;
  const { handleBatch } = options;
  const maxBatch = Math.max(1, options.maxBatch ?? PULL_SIZE);
  let stopped = false;
  let messages: any;

  async function processBatch(batch: JsMsg[]) {
    if (!handleBatch) return;
    const items: ConsumedEvent[] = [];
    const decoded: JsMsg[] = [];
    for (const m of batch) {
      try {
        items.push({ event: codec.decode(m.data), seq: m.seq, subject: m.subject });
        decoded.push(m);
      } catch {
        // Not JSON: processMessage terminates it.
        await processMessage(m);
      }
    }
    if (items.length === 0) return;
    try {
      await handleBatch(items);
    } catch (error) {
      logger.debug('event batch failed; handling its events one by one', { count: items.length, error: String(error) });
      for (const m of decoded) await processMessage(m);
      return;
    }
    for (const m of decoded) m.ack();
  }

  async function processMessage(m: JsMsg) {
    let event: EventEnvelope;
    try {
      event = codec.decode(m.data);
    } catch {
      logger.error('poison event: not JSON', { subject: m.subject, seq: m.seq });
      m.term();
      return;
    }
    try {
      await handle(event, { seq: m.seq, subject: m.subject });
      m.ack();
    } catch (error) {
      const deliveries = m.info.redeliveryCount;
      if (error instanceof PoisonMessageError || (!(error instanceof TransientError) && deliveries >= maxDeliveries)) {
        logger.error('event terminated', { event_id: event.id, type: event.type, error: String(error) });
        m.term();
      } else {
        const delay = error instanceof TransientError ? error.retryAfterMs : Math.min(1000 * 2 ** Math.min(deliveries, 5), 30_000);
        logger.warn('event will be retried', { event_id: event.id, type: event.type, error: String(error), delay_ms: delay });
        m.nak(delay);
      }
    }
  }

  async function loop() {
    let backoff = 500;
    while (!stopped) {
      try {
        await ensureStream(nc, stream, subjectPrefix, { replicas: options.replicas, logger });
        await ensureConsumer(await nc.jetstreamManager(), stream, durableConfig(durable, `${subjectPrefix}.${filter}`), logger);
        const consumer = await nc.jetstream().consumers.get(stream, durable);
        // Pull requests expire after 5 s (heartbeats every 2.5 s) instead of the client's 30 s: when
        // the consumer's leader moves to another node of a cluster, a lost pull is noticed and
        // re-issued within ~5 s rather than ~30 s.
        messages = await consumer.consume({ max_messages: PULL_SIZE, expires: 5000 });
        backoff = 500;
        const inFlight = new Set<Promise<void>>();
        // Batch mode: messages waiting for a free batch slot.
        const waiting: JsMsg[] = [];
        const startBatches = () => {
          while (waiting.length > 0 && inFlight.size < concurrency) {
            const batch = waiting.splice(0, maxBatch);
            const failed = (error: unknown) => logger.warn('event batch not settled', { count: batch.length, error: String(error) });
            const done: Promise<void> = processBatch(batch)
              .catch(failed)
              .finally(() => {
                inFlight.delete(done);
                startBatches();
              });
            inFlight.add(done);
          }
        };
        for await (const m of messages) {
          if (handleBatch) {
            waiting.push(m);
            startBatches();
            while (waiting.length >= maxBatch && inFlight.size > 0) await Promise.race(inFlight);
          } else {
            const done: Promise<void> = processMessage(m).finally(() => inFlight.delete(done));
            inFlight.add(done);
            if (inFlight.size >= concurrency) await Promise.race(inFlight);
          }
          if (stopped) break;
        }
        // Messages already received are handled (and acked) before stopping or restarting.
        while (inFlight.size > 0) await Promise.all(inFlight);
      } catch (error) {
        if (stopped) break;
        logger.warn('consumer restarting', { durable, error: error instanceof Error ? error.message : String(error) });
      }
      if (!stopped) {
        await sleep(backoff);
        backoff = Math.min(backoff * 2, 5000);
      }
    }
  }

  const running = loop();
  return {
    /** Stops fetching; the message being handled finishes and is acked first. */
    async stop(): Promise<void> {
      stopped = true;
      messages?.stop();
      await running;
    },
  };
}

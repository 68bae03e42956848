import type { EventEnvelope } from '@crm/contracts';
import type { Logger } from '@crm/http';
import { AckPolicy, DeliverPolicy, JSONCodec, type JsMsg, type NatsConnection, nanos } from 'nats';
import { ensureStream } from './nats.ts';

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
  handle: (event: EventEnvelope) => Promise<void>;
  logger: Logger;
  /** After this many deliveries an unexpected error terminates the message instead of retrying. */
  maxDeliveries?: number;
  /**
   * Messages handled at the same time (default 1: strictly one after another). More lets the
   * database group commits when each message is its own transaction; order becomes best-effort.
   */
  concurrency?: number;
}

const codec = JSONCodec<EventEnvelope>();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs a durable JetStream consumer with explicit ack: ack on success, nak with delay on
 * transient errors, term on poison messages; the consume loop restarts after any failure
 * (NATS restart, consumer deleted).
 */
export function startConsumer(options: ConsumerOptions) {
  const { nc, stream, subjectPrefix, durable, filter = '>', handle, logger, maxDeliveries = 20, concurrency = 1 } = options;
  let stopped = false;
  let messages: any;

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
      await handle(event);
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
        await ensureStream(nc, stream, subjectPrefix);
        const jsm = await nc.jetstreamManager();
        const config = {
          durable_name: durable,
          ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.All,
          filter_subject: `${subjectPrefix}.${filter}`,
          ack_wait: nanos(30_000),
          max_deliver: -1,
        };
        try {
          await jsm.consumers.info(stream, durable);
        } catch {
          await jsm.consumers.add(stream, config);
        }
        const consumer = await nc.jetstream().consumers.get(stream, durable);
        messages = await consumer.consume({ max_messages: 64 });
        backoff = 500;
        const inFlight = new Set<Promise<void>>();
        for await (const m of messages) {
          const done: Promise<void> = processMessage(m).finally(() => inFlight.delete(done));
          inFlight.add(done);
          if (inFlight.size >= concurrency) await Promise.race(inFlight);
          if (stopped) break;
        }
        await Promise.all(inFlight);
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

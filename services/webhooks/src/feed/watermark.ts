// The events feed's watermark (contract §25): an event is listed only once every event before it
// in the stream is stored, so a cursor walk never steps over an event that is stored later.
//
// The ingest consumer stores each event, and only then acks it. JetStream's ack floor of that
// durable consumer (`ack_floor.stream_seq`) is the highest stream sequence at and below which
// every message is acked (or terminated: it can never be stored) — so every event with
// `seq <= floor` is stored, whatever order the consumer's concurrent handlers finished in. Events
// consumed out of order wait above the floor until the ones before them are stored. The consumer
// takes every subject of the stream; for a filtered consumer the floor skips the sequences of
// other subjects (checked on NATS 2.9), so those would not block either.
//
// Any value at or below the true floor is safe (it only delays listing), so a cached value is
// used for `refreshMs`, and the last known one while NATS cannot be asked.
import { isNotFound } from '@crm/events';
import { AppError, type Logger } from '@crm/http';
import type { JetStreamManager, NatsConnection } from 'nats';

export interface Watermark {
  /** The highest stream sequence the feed may list. */
  current(): Promise<number>;
}

export interface WatermarkOptions {
  /** Reads the ack floor now. */
  read: () => Promise<number>;
  /** How long a value read is reused; 0 reads on every call (calls at the same moment share one read). */
  refreshMs: number;
  logger: Logger;
  now?: () => number;
}

/** A cached, single-flight watermark over `read`. */
export function cachedWatermark(options: WatermarkOptions): Watermark {
  const { read, refreshMs, logger, now = Date.now } = options;
  let value: number | undefined;
  let readAt = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<number> | undefined;
  let failing = false;

  async function refresh(): Promise<number> {
    const startedAt = now();
    try {
      value = await read();
      readAt = startedAt;
      if (failing) logger.info('events feed watermark readable again', { watermark: value });
      failing = false;
      return value;
    } catch (error) {
      if (!failing) logger.warn('events feed watermark cannot be read', { error: error instanceof Error ? error.message : String(error) });
      failing = true;
      if (value === undefined)
        throw new AppError('service_unavailable', 'The events feed cannot reach the event stream right now; retry later');
      // Stale is safe (it only delays listing); ask again after another refresh period.
      readAt = startedAt;
      return value;
    } finally {
      inFlight = undefined;
    }
  }

  return {
    current() {
      if (value !== undefined && now() - readAt < refreshMs) return Promise.resolve(value);
      inFlight ??= refresh();
      return inFlight;
    },
  };
}

export interface ConsumerWatermarkOptions {
  nc: NatsConnection;
  stream: string;
  durable: string;
  refreshMs: number;
  logger: Logger;
  /** NATS request timeout for the consumer info. */
  timeoutMs?: number;
}

/** The watermark of the feed: the ack floor of the ingest consumer; 0 before the consumer exists. */
export function consumerWatermark(options: ConsumerWatermarkOptions): Watermark {
  const { nc, stream, durable, refreshMs, logger, timeoutMs = 2000 } = options;
  let jsm: Promise<JetStreamManager> | undefined;
  return cachedWatermark({
    refreshMs,
    logger,
    async read() {
      jsm ??= nc.jetstreamManager({ timeout: timeoutMs }).catch((error) => {
        jsm = undefined;
        throw error;
      });
      try {
        return (await (await jsm).consumers.info(stream, durable)).ack_floor.stream_seq;
      } catch (error) {
        if (isNotFound(error)) return 0;
        throw error;
      }
    },
  });
}

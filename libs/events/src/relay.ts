import type { EventEnvelope } from '@crm/contracts';
import { JSONCodec, type NatsConnection } from 'nats';
import pg from 'pg';
import type { Logger } from './logger.ts';
import { ensureStream } from './nats.ts';

export interface RelayOptions {
  pool: pg.Pool;
  /** Connection settings for the LISTEN client (same database and search_path as the pool). */
  listenConfig: pg.ClientConfig;
  schema: string;
  nc: NatsConnection;
  stream: string;
  subjectPrefix: string;
  logger: Logger;
  pollMs?: number;
  batchSize?: number;
  /** Replicas of the stream when the relay has to create or correct it (`NATS_STREAM_REPLICAS`). */
  replicas?: number;
}

const codec = JSONCodec<EventEnvelope>();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface OutboxRow {
  seq: number;
  id: string;
  tenant_id: string;
  type: string;
  payload: unknown;
  created_at: Date;
}

/**
 * Publishes pending outbox rows to JetStream with Nats-Msg-Id = event id, then marks them
 * published. Order is best-effort, as the contract promises (§16), not commit order: a batch
 * takes the pending rows in `seq` order (the order their inserts ran, which is not the order
 * their transactions committed: a row with a lower seq may commit, and so be published, after
 * one with a higher seq) and publishes the batch's rows concurrently; several replicas take
 * disjoint batches through SKIP LOCKED; a batch that failed is published again after later ones.
 * Woken by LISTEN/NOTIFY, with a polling fallback; while NATS or PostgreSQL is down the rows
 * stay pending and are retried with backoff, and the LISTEN connection is opened again, so the
 * relay resumes by itself when they are back. A crash after publishing and before marking is
 * absorbed by the stream's duplicate window.
 */
export function startOutboxRelay(options: RelayOptions) {
  const { pool, schema, nc, stream, subjectPrefix, logger, pollMs = 1000, batchSize = 200, replicas } = options;
  let stopped = false;
  let wake: (() => void) | undefined;
  let listener: pg.Client | undefined;
  let streamReady = false;

  async function drainOnce(): Promise<number> {
    if (!streamReady) {
      await ensureStream(nc, stream, subjectPrefix, { replicas, logger });
      streamReady = true;
    }
    const client = await pool.connect();
    try {
      await client.query('begin');
      const { rows } = await client.query<OutboxRow>(
        'select seq, id, tenant_id, type, payload, created_at from outbox where published_at is null order by seq limit $1 for update skip locked',
        [batchSize],
      );
      if (rows.length > 0) {
        const js = nc.jetstream();
        await Promise.all(
          rows.map((row) =>
            js.publish(
              `${subjectPrefix}.${row.type}`,
              codec.encode({
                id: row.id,
                type: row.type,
                tenant_id: row.tenant_id,
                occurred_at: row.created_at.toISOString(),
                data: row.payload,
              }),
              { msgID: row.id, timeout: 5000 },
            ),
          ),
        );
        await client.query('update outbox set published_at = now() where seq = any($1::bigint[])', [rows.map((r) => r.seq)]);
      }
      await client.query('commit');
      return rows.length;
    } catch (error) {
      // Check the stream again before the next attempt (it may have been deleted or lost).
      streamReady = false;
      await client.query('rollback').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  async function listen() {
    while (!stopped) {
      const client = new pg.Client(options.listenConfig);
      // Listening before connect: a connection lost at any moment (a PostgreSQL restart) is an
      // 'error' event, and an unheard one would crash the process.
      const lost = new Promise<void>((resolve) => {
        client.on('error', () => resolve());
        client.on('end', () => resolve());
      });
      try {
        await client.connect();
        client.on('notification', () => wake?.());
        await client.query(`listen "crm_outbox_${schema}"`);
        listener = client;
        // Rows committed while we were not listening are picked up now rather than at the next poll.
        wake?.();
        await lost;
        if (!stopped) logger.warn('outbox LISTEN connection lost; reconnecting (polling meanwhile)', { schema });
      } catch {
        // Database unavailable; the polling fallback keeps the relay going.
      }
      listener = undefined;
      await client.end().catch(() => {});
      if (!stopped) await sleep(1000);
    }
  }

  async function loop() {
    let backoff = 0;
    while (!stopped) {
      try {
        const published = await drainOnce();
        backoff = 0;
        if (published === batchSize) continue;
        if (published > 0) logger.debug('outbox published', { count: published });
      } catch (error) {
        backoff = Math.min(Math.max(backoff * 2, 250), 5000);
        logger.warn('outbox relay retrying', { error: error instanceof Error ? error.message : String(error), retry_ms: backoff });
        await sleep(backoff);
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  }

  void listen();
  const running = loop();

  return {
    /** Stops the relay after one last drain, so committed events are not left behind on shutdown. */
    async stop(): Promise<void> {
      stopped = true;
      wake?.();
      await running;
      await drainOnce().catch((error) => logger.warn('final outbox drain failed', { error: String(error) }));
      await listener?.end().catch(() => {});
    },
  };
}

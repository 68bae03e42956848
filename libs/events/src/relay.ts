import type { EventEnvelope } from '@crm/contracts';
import { preparedOn, QUEUE_SCAN_SETTINGS, setLocal } from '@crm/db';
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
 * The pending rows of one batch, oldest first, walked as `QUEUE_SCAN_SETTINGS` say. `limit` is
 * an integer literal: the statement takes no parameters, so the plan made at its first EXECUTE
 * on a connection (under that setting) is the one it keeps.
 */
export function pendingRowsQuery(limit: number): string {
  return `select seq, id, tenant_id, type, payload, created_at from outbox where published_at is null order by seq limit ${Math.floor(limit)} for update skip locked`;
}

/** Marks a batch's rows published; $1: their seqs. */
export const MARK_PUBLISHED = 'update outbox set published_at = now() where seq = any($1)';

/**
 * A batch's transaction and the settings its statements run (and are planned) under: its commit
 * does not wait for the WAL flush (were it lost in a crash, the rows would be published again,
 * which the stream's duplicate window absorbs), the queue's scan settings (`QUEUE_SCAN_SETTINGS`),
 * and the marking under its generic plan (one index lookup per seq) whatever the batch's size.
 */
const BATCH_SETTINGS = ['synchronous_commit = off', ...QUEUE_SCAN_SETTINGS, 'plan_cache_mode = force_generic_plan'];
export const BATCH_BEGIN = `begin; ${setLocal(BATCH_SETTINGS)}`;

/** The longest wait between two attempts while NATS or PostgreSQL fails (the back-off doubles up to it). */
export const RELAY_MAX_BACKOFF_MS = 1000;

/**
 * How long a publish waits for JetStream's ack, and the stream check after a failure for its
 * answer. A leader that vanished leaves requests unanswered until this runs out (an answer normally
 * takes milliseconds), so it bounds how late the relay notices a leader change; a late ack only
 * makes the batch go again (the duplicate window absorbs it).
 */
export const RELAY_PUBLISH_TIMEOUT_MS = 2000;

/**
 * Publishes pending outbox rows to JetStream with Nats-Msg-Id = event id, then marks them
 * published. Order is best-effort, as the contract promises (§16), not commit order: a batch
 * takes the pending rows in `seq` order (the order their inserts ran, which is not the order
 * their transactions committed: a row with a lower seq may commit, and so be published, after
 * one with a higher seq) and publishes the batch's rows concurrently (their acks awaited
 * together); several replicas take disjoint batches through SKIP LOCKED; a batch that failed is
 * published again after later ones.
 *
 * Woken by LISTEN/NOTIFY, with a polling fallback: a notification that arrives while a batch is
 * being published starts the next batch right after it (never left to the poll). Batches run on
 * the LISTEN connection itself (no wait for a pool connection behind the service's requests;
 * two round trips to PostgreSQL per batch: `begin; execute <select … for update skip locked>`,
 * then `execute <update>; commit`, each statement PREPAREd once per connection), on a pool
 * connection while that connection is being opened again.
 * While NATS or PostgreSQL is down the rows stay pending and are retried with a back-off of at
 * most RELAY_MAX_BACKOFF_MS, counted from the start of the failed attempt (so publishing resumes
 * within about RELAY_PUBLISH_TIMEOUT_MS once a new stream leader exists: a publish to a vanished
 * leader fails after that timeout, and the next one starts at once), and at once when the NATS
 * client reconnects; the LISTEN connection is opened
 * again, so the relay resumes by itself. A crash after publishing and before marking is absorbed
 * by the stream's duplicate window.
 */
export function startOutboxRelay(options: RelayOptions) {
  const { pool, schema, nc, stream, subjectPrefix, logger, pollMs = 1000, batchSize = 200, replicas } = options;
  let stopped = false;
  /** Set by every wake-up (NOTIFY, reconnect, stop); cleared when a batch starts. */
  let wanted = false;
  let wake: (() => void) | undefined;
  /** While set, only a NATS reconnect or stop ends the pause (a NOTIFY per write would retry at once while NATS is down). */
  let backingOff = false;
  const signal = (force = false) => {
    wanted = true;
    if (force || !backingOff) wake?.();
  };
  let listener: pg.Client | undefined;
  let streamReady = false;
  const limit = Math.max(1, Math.floor(batchSize));

  async function drainOnce(): Promise<number> {
    if (!streamReady) {
      await ensureStream(nc, stream, subjectPrefix, { replicas, logger, timeoutMs: RELAY_PUBLISH_TIMEOUT_MS });
      streamReady = true;
    }
    const own = listener;
    const client = own ?? (await pool.connect());
    try {
      // Both statements are PREPAREd once per connection and executed by name, so PostgreSQL plans
      // them once (under BATCH_SETTINGS) instead of on every batch.
      const pending = await preparedOn(client, pendingRowsQuery(limit));
      const mark = await preparedOn(client, MARK_PUBLISHED, ['bigint[]']);
      // One round trip: a simple-protocol query may hold several statements.
      const results = (await client.query(`${BATCH_BEGIN}; execute ${pending}`)) as unknown as pg.QueryResult<OutboxRow>[];
      const rows = results[BATCH_SETTINGS.length + 1]?.rows ?? [];
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
              { msgID: row.id, timeout: RELAY_PUBLISH_TIMEOUT_MS },
            ),
          ),
        );
        // seq is a bigint read as text by pg: digits only, checked before it is put in the statement.
        const seqs = rows.map((r) => String(r.seq));
        if (!seqs.every((seq) => /^\d+$/.test(seq))) throw new Error('outbox seq is not an integer');
        await client.query(`execute ${mark}('{${seqs.join(',')}}'); commit`);
      } else {
        await client.query('commit');
      }
      return rows.length;
    } catch (error) {
      // Check the stream again before the next attempt (it may have been deleted or lost).
      streamReady = false;
      await client.query('rollback').catch(() => {});
      throw error;
    } finally {
      if (!own) (client as pg.PoolClient).release();
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
        client.on('notification', () => signal());
        // Named once it listens, so operators (and the fault tests) can tell a listening relay in
        // pg_stat_activity whatever its last query was (its batches run on this connection too).
        await client.query(`listen "crm_outbox_${schema}"; set application_name = 'crm-outbox-relay:${schema}'`);
        listener = client;
        // Rows committed while we were not listening are picked up now rather than at the next poll.
        signal();
        await lost;
        if (!stopped) logger.warn('outbox LISTEN connection lost; reconnecting (polling meanwhile)', { schema });
      } catch {
        // Database unavailable; the polling fallback keeps the relay going.
      }
      if (listener === client) listener = undefined;
      await client.end().catch(() => {});
      if (!stopped) await sleep(1000);
    }
  }

  /** Waits up to `ms`, or less when woken; returns at once when a wake-up came since the last batch started. */
  async function pause(ms: number): Promise<void> {
    if (wanted && !backingOff) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    wake = undefined;
  }

  // A reconnected NATS client (a server back, or another node of the cluster) ends a back-off at once.
  void (async () => {
    for await (const status of nc.status()) {
      if (stopped) break;
      if (status.type === 'reconnect') signal(true);
    }
  })().catch(() => {});

  async function loop() {
    let backoff = 0;
    while (!stopped) {
      wanted = false;
      const startedAt = Date.now();
      try {
        const published = await drainOnce();
        backoff = 0;
        if (published === limit) continue;
        if (published > 0) logger.debug('outbox published', { count: published });
      } catch (error) {
        backoff = Math.min(Math.max(backoff * 2, 100), RELAY_MAX_BACKOFF_MS);
        // An attempt that itself waited (a publish timing out) counts towards the back-off: one
        // attempt per back-off period at most, without adding a pause to a timeout.
        const retryMs = Math.max(0, backoff - (Date.now() - startedAt));
        logger.warn('outbox relay retrying', { error: error instanceof Error ? error.message : String(error), retry_ms: retryMs });
        wanted = false;
        backingOff = true;
        await pause(retryMs);
        backingOff = false;
        continue;
      }
      await pause(pollMs);
    }
  }

  void listen();
  const running = loop();

  return {
    /** Stops the relay after one last drain, so committed events are not left behind on shutdown. */
    async stop(): Promise<void> {
      stopped = true;
      signal(true);
      await running;
      await drainOnce().catch((error) => logger.warn('final outbox drain failed', { error: String(error) }));
      await listener?.end().catch(() => {});
    },
  };
}

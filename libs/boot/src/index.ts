import { ConfigError, natsServers } from '@crm/config';
import { createDb, ensureDatabase, type Migration, migrate, poolConfig, statementCount } from '@crm/db';
import { checkNats, connectNats, setStreamReplicas, startOutboxPurge, startOutboxRelay } from '@crm/events';
import { createLogger, type Logger, type ReadinessCheck, registerCounter } from '@crm/http';
import { exit, onShutdown, serve } from '@crm/runtime';
import { type Kysely, sql } from 'kysely';
import type { NatsConnection } from 'nats';
import type pg from 'pg';

export interface BootConfig {
  DATABASE_URL: string;
  /** One server or a comma-separated list (a cluster). */
  NATS_URL: string;
  NATS_STREAM_REPLICAS: number;
  DB_POOL_MAX: number;
  /** Days a published outbox row is kept before the purge deletes it. */
  OUTBOX_RETENTION_DAYS: number;
  EVENTS_STREAM: string;
  EVENTS_SUBJECT_PREFIX: string;
  LOG_LEVEL: 'debug' | 'info' | 'warn' | 'error';
  HOST: string;
}

export interface BootContext<DB> {
  db: Kysely<DB>;
  pool: pg.Pool;
  nc: NatsConnection;
  logger: Logger;
  /** Readiness checks for the database and NATS, to pass on to the service kit. */
  readiness: ReadinessCheck[];
}

export interface Stoppable {
  stop(): Promise<void>;
}

export interface ServiceSpec<DB> {
  name: string;
  /** The Postgres schema the service owns. */
  schema: string;
  port: number;
  config: BootConfig;
  migrations: Migration[];
  /** Whether this service writes an outbox and runs the relay. */
  relay?: boolean;
  tls?: { cert: string; key: string };
  /** Whether requests need `clientAddress()` (the gateway's rate limits and audit; a lookup per request). */
  clientAddresses?: boolean;
  start(ctx: BootContext<DB>): Promise<{ fetch: (r: Request) => Response | Promise<Response>; background?: Stoppable[] }>;
}

/** Loads config with `load`, printing a clear message and exiting 1 when it is invalid. */
export function loadOrExit<T>(service: string, load: () => T): T {
  try {
    return load();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(JSON.stringify({ level: 'error', service, msg: error.message, problems: error.problems }));
      exit(1);
    }
    throw error;
  }
}

/**
 * Boots a service: database (created and migrated), NATS, outbox relay, HTTP server; on
 * SIGTERM it stops accepting, finishes in-flight requests, stops background work, flushes the
 * outbox and exits 0.
 */
export async function runService<DB>(spec: ServiceSpec<DB>): Promise<void> {
  const { config } = spec;
  const logger = createLogger(spec.name, config.LOG_LEVEL);
  await ensureDatabase(config.DATABASE_URL);
  const { db, pool } = createDb<DB>({ url: config.DATABASE_URL, schema: spec.schema, max: config.DB_POOL_MAX });
  registerCounter('db_queries_total', 'SQL statements sent through the query builder', statementCount);
  const applied = await migrate(db, spec.schema, spec.migrations);
  if (applied.length > 0) logger.info('migrations applied', { applied });
  // Every later check of the events stream (relay, consumers) creates or corrects it with these replicas.
  setStreamReplicas(config.EVENTS_STREAM, config.NATS_STREAM_REPLICAS);
  const nc = await connectNats(natsServers(config.NATS_URL), spec.name, logger);
  const readiness: ReadinessCheck[] = [
    { name: 'database', check: () => sql`select 1`.execute(db) },
    { name: 'nats', check: () => checkNats(nc) },
  ];
  const relay = spec.relay
    ? startOutboxRelay({
        pool,
        listenConfig: poolConfig({ url: config.DATABASE_URL, schema: spec.schema }),
        replicas: config.NATS_STREAM_REPLICAS,
        schema: spec.schema,
        nc,
        stream: config.EVENTS_STREAM,
        subjectPrefix: config.EVENTS_SUBJECT_PREFIX,
        logger,
      })
    : undefined;
  const outboxPurge = spec.relay ? startOutboxPurge(db, config.OUTBOX_RETENTION_DAYS, logger) : undefined;
  const { fetch, background = [] } = await spec.start({ db, pool, nc, logger, readiness });
  const server = serve(fetch, { port: spec.port, hostname: config.HOST, tls: spec.tls, clientAddresses: spec.clientAddresses });
  logger.info('listening', { port: server.port, host: config.HOST });

  onShutdown(async () => {
    logger.info('shutting down');
    await server.stop();
    for (const job of background) await job.stop();
    await outboxPurge?.stop();
    await relay?.stop();
    await nc.drain().catch(() => {});
    await db.destroy();
    logger.info('stopped');
  });
}

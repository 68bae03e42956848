import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DeleteBucketCommand, DeleteObjectsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { ensureDatabase } from '@crm/db';
import { ensureMinio, ensureNats, ensurePostgres, localS3, repoRoot, type S3Env, s3Client } from '@crm/stack';
import { connect } from 'nats';
import pg from 'pg';

export interface RunResources {
  runId: string;
  baseDb: string;
  natsUrl: string;
  dataDir: string;
  s3: S3Env;
  databaseUrl: string;
  stream: string;
  subjectPrefix: string;
  bucket: string;
  adminToken: string;
  internalToken: string;
  /** Environment every process of the run shares: database, NATS, stream, S3, tokens. */
  env: Record<string, string>;
}

/**
 * Brings up PostgreSQL, NATS and MinIO where needed and names a database, JetStream stream
 * (with its own subject prefix) and bucket of the run's own, so runs never see each other's
 * data. `kind` goes into the names (`crm_<kind>_<id>`).
 */
export async function prepareRun(
  kind: string,
  options: {
    /** One NATS server or a comma-separated cluster list. */
    natsUrl?: string;
    /** A PostgreSQL server of the caller's own (any database on it; the run's database is created there). */
    baseDb?: string;
    log?: (m: string) => void;
  } = {},
): Promise<RunResources> {
  const log = options.log ?? (() => {});
  const runId = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const baseDb = options.baseDb ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const natsUrl = options.natsUrl ?? process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
  const dataDir = join(repoRoot, '.data');
  const s3: S3Env = localS3();
  mkdirSync(dataDir, { recursive: true });
  await ensurePostgres(baseDb, log);
  await ensureNats(natsUrl, dataDir, log);
  await ensureMinio(s3, dataDir, log, true);

  const dbUrl = new URL(baseDb);
  dbUrl.pathname = `/crm_${kind}_${runId}`;
  const databaseUrl = dbUrl.toString();
  await ensureDatabase(databaseUrl);
  const tag = kind.charAt(0);
  const stream = `CRM_EVENTS_${tag.toUpperCase()}${runId.toUpperCase()}`;
  const subjectPrefix = `crm${tag}${runId}.events`;
  const bucket = `crm-${kind}-${runId}`;
  const adminToken = `admin-${crypto.randomUUID()}`;
  const internalToken = `internal-${crypto.randomUUID()}`;
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    NATS_URL: natsUrl,
    INTERNAL_TOKEN: internalToken,
    ADMIN_TOKEN: adminToken,
    EVENTS_STREAM: stream,
    EVENTS_SUBJECT_PREFIX: subjectPrefix,
    S3_ENDPOINT: s3.endpoint,
    S3_ACCESS_KEY: s3.accessKey,
    S3_SECRET_KEY: s3.secretKey,
    S3_REGION: s3.region,
    S3_BUCKET: bucket,
    WEBHOOK_ALLOWED_NETS: '127.0.0.0/8,::1/128',
    LOG_LEVEL: 'info',
  };
  return { runId, baseDb, natsUrl, dataDir, s3, databaseUrl, stream, subjectPrefix, bucket, adminToken, internalToken, env };
}

/**
 * Ends a pg pool on the run's database and waits until its connections have closed. pg-pool's
 * `end()` resolves as soon as its idle clients are out of the pool, while their connections are
 * still closing, and leaves the pool's idle 'error' listener on each: the `drop database … with
 * (force)` of dropRunResources() then terminates such a connection and the pool re-emits that as an
 * 'error' nobody hears, which Bun's test runner reports as an unhandled error between tests. Its
 * errors from here on are ignored: the run's data is going away.
 */
export async function endPool(pool: pg.Pool, timeoutMs = 5_000): Promise<void> {
  pool.on('error', () => {});
  let open = pool.totalCount;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const closed = new Promise<void>((resolve) => {
    if (open === 0) return resolve();
    pool.on('remove', () => {
      if (--open === 0) resolve();
    });
    timer = setTimeout(resolve, timeoutMs);
  });
  await pool.end();
  await closed;
  clearTimeout(timer);
}

/** Drops the run's database, stream and bucket (whatever of them still exists). */
export async function dropRunResources(r: RunResources): Promise<void> {
  const client = new pg.Client({ connectionString: r.baseDb });
  await client.connect().catch(() => {});
  await client.query(`drop database if exists "${new URL(r.databaseUrl).pathname.slice(1)}" with (force)`).catch(() => {});
  await client.end().catch(() => {});
  try {
    const nc = await connect({ servers: r.natsUrl.split(','), timeout: 2000 });
    await (await nc.jetstreamManager()).streams.delete(r.stream).catch(() => {});
    await nc.close();
  } catch {
    // NATS down (a fault test may have stopped it); the stream ages out by itself.
  }
  const s3 = s3Client(r.s3);
  try {
    for (;;) {
      const listed = await s3.send(new ListObjectsV2Command({ Bucket: r.bucket }));
      const keys = (listed.Contents ?? []).map((o) => ({ Key: o.Key as string }));
      if (keys.length === 0) break;
      await s3.send(new DeleteObjectsCommand({ Bucket: r.bucket, Delete: { Objects: keys } }));
    }
    await s3.send(new DeleteBucketCommand({ Bucket: r.bucket }));
  } catch {
    // bucket never created or already gone
  } finally {
    s3.destroy();
  }
}

// Cost per request of the two candidate shared stores for the gateway's rate limiter (issue 5):
// a PostgreSQL single-statement GCRA upsert (logged, and on the UNLOGGED table the gateway uses) vs NATS JetStream KV
// (get + compare-and-set update with the revision, retried on conflict).
// Usage: bun loadtest/ratelimit-store.ts [--requests 2000] [--concurrency 16]
// Sends traffic only to the local PostgreSQL and NATS; bounded by the request count.
import { parseArgs } from 'node:util';
import { ensureDatabase } from '@crm/db';
import { ensureNats, ensurePostgres } from '@crm/stack';
import { connect, type KV, StringCodec } from 'nats';
import pg from 'pg';

const { values } = parseArgs({
  options: { requests: { type: 'string', default: '2000' }, concurrency: { type: 'string', default: '16' } },
});
const REQUESTS = Math.min(Number(values.requests), 20_000);
const CONCURRENCY = Math.min(Number(values.concurrency), 64);
const PERIOD = 60_000;
const LIMIT = 1_000_000; // never refuse: we measure the cost of the bookkeeping
const INTERVAL = PERIOD / LIMIT;

const baseDb = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
await ensurePostgres(baseDb, () => {});
await ensureNats(natsUrl, '.data', () => {});
const dbUrl = new URL(baseDb);
dbUrl.pathname = `/crm_ratelimit_bench_${Date.now().toString(36)}`;
await ensureDatabase(dbUrl.toString());
const pool = new pg.Pool({ connectionString: dbUrl.toString(), max: CONCURRENCY });
await pool.query('create table rate_limits (bucket text primary key, tat_ms double precision not null, allowed boolean not null)');
await pool.query(
  'create unlogged table rate_limits_unlogged (bucket text primary key, tat_ms double precision not null, allowed boolean not null)',
);

const UPSERT = `
  insert into rate_limits as r (bucket, tat_ms, allowed)
  values ($1, extract(epoch from now()) * 1000 + $2::float8, true)
  on conflict (bucket) do update set
    allowed = greatest(r.tat_ms, excluded.tat_ms - $2::float8) + $2::float8 <= excluded.tat_ms - $2::float8 + $3::float8,
    tat_ms = case when greatest(r.tat_ms, excluded.tat_ms - $2::float8) + $2::float8 <= excluded.tat_ms - $2::float8 + $3::float8
                  then greatest(r.tat_ms, excluded.tat_ms - $2::float8) + $2::float8 else r.tat_ms end
  returning tat_ms, allowed`;

const UPSERT_UNLOGGED = UPSERT.replace('into rate_limits as r', 'into rate_limits_unlogged as r');

async function postgresConsume(bucket: string): Promise<number> {
  await pool.query(UPSERT, [bucket, INTERVAL, PERIOD]);
  return 0;
}

/** The same statement on an UNLOGGED table (what the gateway uses): no WAL flush per request. */
async function postgresUnloggedConsume(bucket: string): Promise<number> {
  await pool.query(UPSERT_UNLOGGED, [bucket, INTERVAL, PERIOD]);
  return 0;
}

const nc = await connect({ servers: natsUrl });
const bucketName = `ratelimit_bench_${Date.now().toString(36)}`;
const kv: KV = await (await nc.jetstream()).views.kv(bucketName, { history: 1 });
const sc = StringCodec();

/** GCRA on KV: read the tat and its revision, write it back only if nobody changed it (CAS); retries on conflict. */
async function kvConsume(bucket: string): Promise<number> {
  for (let conflicts = 0; ; conflicts++) {
    const entry = await kv.get(bucket);
    const now = Date.now();
    const tat = entry && entry.operation === 'PUT' ? Number(sc.decode(entry.value)) : now;
    const next = Math.max(tat, now) + INTERVAL;
    try {
      if (entry) await kv.update(bucket, sc.encode(String(next)), entry.revision);
      else await kv.create(bucket, sc.encode(String(next)));
      return conflicts;
    } catch {
      // another request changed the bucket in between: read again
    }
  }
}

async function measure(name: string, consume: (bucket: string) => Promise<number>, buckets: number) {
  const latencies: number[] = [];
  let conflicts = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        const i = next++;
        const t0 = performance.now();
        conflicts += await consume(`tenant-${i % buckets}.write`);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => (latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] as number).toFixed(2);
  console.log(
    `${name.padEnd(40)} ${String(Math.round(REQUESTS / seconds)).padStart(6)} ops/s  p50 ${at(0.5)} ms  p99 ${at(0.99)} ms  CAS retries ${conflicts}`,
  );
}

console.log(`${REQUESTS} operations, ${CONCURRENCY} concurrent`);
for (const buckets of [1, 100]) {
  await measure(`postgres upsert, ${buckets} bucket(s)`, postgresConsume, buckets);
  await measure(`postgres unlogged upsert, ${buckets} bucket(s)`, postgresUnloggedConsume, buckets);
  await measure(`jetstream kv get+cas, ${buckets} bucket(s)`, kvConsume, buckets);
}

await (await nc.jetstreamManager()).streams.delete(`KV_${bucketName}`);
await nc.close();
await pool.end();
const admin = new pg.Client({ connectionString: baseDb });
await admin.connect();
await admin.query(`drop database if exists "${dbUrl.pathname.slice(1)}" with (force)`);
await admin.end();

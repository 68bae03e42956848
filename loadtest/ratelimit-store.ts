// The PostgreSQL cost of the gateway's per-request database work (issue 18): the rate-limit grant
// and the audit rows, measured as CPU time of the PostgreSQL backends that run them (from
// /proc/<pid>/schedstat, nanoseconds: robust to other load on the machine).
//
// 1. Rate limit: the grant as the limiter sends it (`CONSUME_SQL`, one `insert … on conflict do
//    update … returning`, named prepared statement) vs the PL/pgSQL function of migration 0006
//    (three statements inside a function: the store before migration 0008) vs `gcra_consume` of
//    migration 0008 (the same statement inside a PL/pgSQL function, what 1.1.0 replicas call) vs
//    the statement of 1.2.0–1.2.4 (tat as one float sum, before the anchor and whole intervals of
//    migration 0010);
//    and two references: a statement that only selects its parameters (the per-statement floor:
//    protocol, parse/bind/execute) and a plain update of the row (the floor of any grant that
//    writes the row). Each on 1 bucket (one
//    hot tenant) and 100 buckets, `--concurrency` workers, cases interleaved over `--rounds`.
// 2. Audit: `insertAuditEntries` (audit/repo.ts) in batches of `--audit-batch` typical rows on the
//    real audit table, then the same with index variants, to see what each index costs per row.
// 3. With `--kv`: the former comparison of stores (issue 5), the single-statement upsert in
//    PostgreSQL (logged and UNLOGGED) vs NATS JetStream KV (get + compare-and-set, retried).
//
// Usage: bun loadtest/ratelimit-store.ts [--requests 20000] [--concurrency 16] [--rounds 3]
//          [--audit-rows 50000] [--audit-batch 1300] [--kv]
// Sends traffic only to the local PostgreSQL (and NATS with --kv); bounded by the counts; works in
// a database of its own, dropped at the end.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createDb, ensureDatabase, migrate } from '@crm/db';
import { ensureNats, ensurePostgres } from '@crm/stack';
import { sql } from 'kysely';
import { connect, type KV, StringCodec } from 'nats';
import pg from 'pg';
import { insertAuditEntries } from '../services/gateway/src/audit/repo.ts';
import type { GatewayDatabase } from '../services/gateway/src/db/database.ts';
import { PREVIOUS_CONSUME_SQL } from '../services/gateway/src/db/migrations/0010_gcra_whole_intervals.ts';
import { migrations } from '../services/gateway/src/db/migrations/index.ts';
import { PERIOD_MS, SLACK_MS } from '../services/gateway/src/rate-limit/gcra.ts';
import { CONSUME_SQL } from '../services/gateway/src/rate-limit/limiter.ts';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '16' },
    'audit-rows': { type: 'string', default: '50000' },
    'audit-batch': { type: 'string', default: '1300' },
    rounds: { type: 'string', default: '3' },
    kv: { type: 'boolean', default: false },
  },
});
const REQUESTS = Math.min(Number(values.requests), 200_000);
const CONCURRENCY = Math.min(Number(values.concurrency), 64);
const AUDIT_ROWS = Math.min(Number(values['audit-rows']), 500_000);
const AUDIT_BATCH = Math.min(Number(values['audit-batch']), 10_000);
const ROUNDS = Math.min(Number(values.rounds), 9);
const LIMIT = 1_000_000; // never refuse: we measure the cost of the bookkeeping
const INTERVAL = PERIOD_MS / LIMIT;

const baseDb = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
await ensurePostgres(baseDb, () => {});
const dbUrl = new URL(baseDb);
dbUrl.pathname = `/crm_ratelimit_bench_${Date.now().toString(36)}`;
await ensureDatabase(dbUrl.toString());

/** Nanoseconds of CPU the process has used (Linux schedstat: time on CPU, all threads). */
function cpuNs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
}

/** A pool whose `size` connections are all open, with their backends' pids. */
async function openPool(size: number, options = '-c search_path=gateway,public') {
  const pool = new pg.Pool({ connectionString: dbUrl.toString(), max: size, options });
  const clients = await Promise.all(Array.from({ length: size }, () => pool.connect()));
  const pids = await Promise.all(clients.map(async (c) => (await c.query('select pg_backend_pid() as pid')).rows[0].pid as number));
  for (const c of clients) c.release();
  const cpu = () => pids.reduce((sum, pid) => sum + cpuNs(pid), 0);
  return { pool, cpu };
}

// The gateway's schema, as its migrations make it.
{
  const { db, pool } = createDb<GatewayDatabase>({ url: dbUrl.toString(), schema: 'gateway', max: 1 });
  await migrate(db, 'gateway', migrations);
  // The store before migration 0008: the PL/pgSQL function of migration 0006, under another name.
  await sql`create function gateway.gcra_consume_0006(p_bucket text, p_k integer, p_interval_ms float8, p_period_ms float8, p_slack_ms float8)
    returns table (base_ms float8, granted integer, now_ms float8)
    language plpgsql as $$
    declare
      v_now float8 := extract(epoch from now()) * 1000;
      v_base float8;
      v_granted integer;
    begin
      insert into gateway.rate_limits as r (bucket, tat_ms, allowed) values (p_bucket, v_now, true)
        on conflict (bucket) do nothing;
      select greatest(r.tat_ms, v_now) into v_base from gateway.rate_limits r where r.bucket = p_bucket for update;
      v_granted := least(p_k, greatest(0, floor((v_now + p_period_ms + p_slack_ms - v_base) / p_interval_ms)))::integer;
      update gateway.rate_limits r set tat_ms = v_base + v_granted * p_interval_ms, allowed = v_granted > 0 where r.bucket = p_bucket;
      return query select v_base, v_granted, v_now;
    end $$`.execute(db);
  await db.destroy();
  await pool.end().catch(() => {});
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

interface GrantFigures {
  perSecond: number;
  p50: number;
  p99: number;
  /** PostgreSQL backend CPU per call, µs. */
  cpuUs: number;
}

/**
 * `REQUESTS` grants by `CONCURRENCY` workers, `perCall` buckets per call (`valuesOf` gives a call's
 * parameters from its first grant's number): throughput, latency and backend CPU per grant.
 */
async function measureGrant(
  text: string,
  buckets: number,
  perCall = 1,
  valuesOf = (i: number): unknown[] => [`tenant-${i % buckets}:read`, 1, INTERVAL, PERIOD_MS, SLACK_MS],
): Promise<GrantFigures> {
  const { pool, cpu } = await openPool(CONCURRENCY);
  const statementName = `bench_${Math.random().toString(36).slice(2)}`;
  const latencies: number[] = [];
  let next = 0;
  const cpuBefore = cpu();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        const i = next;
        next += perCall;
        const t0 = performance.now();
        const { rowCount } = await pool.query({ name: statementName, text, values: valuesOf(i) });
        if (rowCount !== perCall) throw new Error(`${text.slice(0, 40)}…: ${rowCount} rows`);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuUs = (cpu() - cpuBefore) / 1000 / REQUESTS;
  await pool.end();
  latencies.sort((a, b) => a - b);
  return { perSecond: REQUESTS / perCall / seconds, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), cpuUs };
}

const args = '$1::text, $2::integer, $3::float8, $4::float8, $5::float8';
const GRANTS = [
  { name: "select of the 5 parameters (any statement's floor)", text: `select ${args}` },
  { name: 'PL/pgSQL function of 0006 (before)', text: `select * from gcra_consume_0006(${args})` },
  { name: 'CONSUME_SQL: one insert … on conflict do update (after)', text: CONSUME_SQL },
  { name: 'the same of 1.2.0–1.2.4 (tat as one float sum)', text: PREVIOUS_CONSUME_SQL },
  {
    name: 'a plain update of the row (tat_ms + interval)',
    text: 'update rate_limits set tat_ms = tat_ms + $3::float8 where bucket = $1::text and $2::integer > 0 and $4::float8 + $5::float8 > 0',
  },
  { name: 'gcra_consume of 0010 (1.1.0 replicas)', text: `select * from gcra_consume(${args})` },
];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
console.log(
  `# Rate limit: ${REQUESTS} grants per case and round, ${CONCURRENCY} workers, ${ROUNDS} rounds (cases interleaved), medians; the bucket rows exist`,
);
console.log(`${'grant'.padEnd(56)} buckets   calls/s   p50 ms   p99 ms  PostgreSQL CPU µs/call (min–max)`);
for (const buckets of [1, 100]) {
  const figures = new Map<string, GrantFigures[]>();
  // Every bucket row exists first: CONSUME_SQL updates only.
  await measureGrant(CONSUME_SQL, buckets);
  for (let round = 0; round < ROUNDS; round++) {
    for (const grant of GRANTS) figures.set(grant.name, [...(figures.get(grant.name) ?? []), await measureGrant(grant.text, buckets)]);
  }
  for (const [name, runs] of figures) {
    const cpus = runs.map((r) => r.cpuUs);
    console.log(
      `${name.padEnd(56)} ${String(buckets).padStart(3)}  ${String(Math.round(median(runs.map((r) => r.perSecond)))).padStart(8)}  ${median(
        runs.map((r) => r.p50),
      )
        .toFixed(2)
        .padStart(7)}  ${median(runs.map((r) => r.p99))
        .toFixed(2)
        .padStart(7)}  ${median(cpus).toFixed(1).padStart(6)} (${Math.min(...cpus).toFixed(1)}–${Math.max(...cpus).toFixed(1)})`,
    );
  }
}

// Across buckets: one statement for the grants of 10 buckets (an update over arrays, the form a
// limiter coalescing across buckets would send) vs the single-bucket statement, per grant.
const MULTI = `update rate_limits r set
  base_ms = greatest(r.tat_ms, n.now_ms),
  granted = least(b.k, greatest(0, floor((n.now_ms + $4::float8 + $5::float8 - greatest(r.tat_ms, n.now_ms)) / b.interval_ms)))::integer,
  tat_ms = greatest(r.tat_ms, n.now_ms)
    + least(b.k, greatest(0, floor((n.now_ms + $4::float8 + $5::float8 - greatest(r.tat_ms, n.now_ms)) / b.interval_ms)))::integer * b.interval_ms,
  allowed = least(b.k, greatest(0, floor((n.now_ms + $4::float8 + $5::float8 - greatest(r.tat_ms, n.now_ms)) / b.interval_ms))) > 0
from unnest($1::text[], $2::integer[], $3::float8[]) as b(bucket, k, interval_ms),
  (select (extract(epoch from now()) * 1000)::float8 as now_ms) n
where r.bucket = b.bucket
returning r.bucket, r.base_ms, r.granted, n.now_ms`;
{
  const tenOf = (i: number) => Array.from({ length: 10 }, (_, j) => `tenant-${(i + j) % 100}:read`).sort();
  const single: number[] = [];
  const multi: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    single.push((await measureGrant(CONSUME_SQL, 100)).cpuUs);
    multi.push(
      (await measureGrant(MULTI, 100, 10, (i) => [tenOf(i), Array(10).fill(1), Array(10).fill(INTERVAL), PERIOD_MS, SLACK_MS])).cpuUs,
    );
  }
  console.log(
    `\n# Across buckets (100 buckets): PostgreSQL CPU per grant, medians of ${ROUNDS}: one statement per bucket ${median(single).toFixed(1)} µs, one statement for 10 buckets ${median(multi).toFixed(1)} µs`,
  );
}

// --- Audit rows ---

const userAgent = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';
const tenants = Array.from({ length: 20 }, () => crypto.randomUUID());
function auditEntry(i: number) {
  const tenant = tenants[i % tenants.length] as string;
  return {
    occurred_at: new Date(),
    request_id: crypto.randomUUID(),
    tenant_id: tenant,
    key_id: `key_${tenant}`,
    method: 'GET',
    path: `/v1/contacts/${crypto.randomUUID()}`,
    query: null,
    status: 200,
    duration_ms: 3.2,
    client_ip: '203.0.113.7',
    user_agent: userAgent,
    idempotency_key: null,
    replayed: false,
    error_type: null,
  };
}

/** Inserts AUDIT_ROWS rows in batches through one connection; prints backend CPU and WAL per row. */
async function measureAudit(name: string): Promise<void> {
  const { db } = createDb<GatewayDatabase>({ url: dbUrl.toString(), schema: 'gateway', max: 1 });
  const pid = Number((await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]?.pid);
  const batches = Array.from({ length: Math.ceil(AUDIT_ROWS / AUDIT_BATCH) }, (_, b) =>
    Array.from({ length: Math.min(AUDIT_BATCH, AUDIT_ROWS - b * AUDIT_BATCH) }, (_, i) => auditEntry(b * AUDIT_BATCH + i)),
  );
  const walBefore = (await sql<{ lsn: string }>`select pg_current_wal_lsn()::text as lsn`.execute(db)).rows[0]?.lsn;
  const cpuBefore = cpuNs(pid);
  const started = performance.now();
  for (const batch of batches) await insertAuditEntries(db, batch);
  const ms = performance.now() - started;
  const cpuUs = (cpuNs(pid) - cpuBefore) / 1000 / AUDIT_ROWS;
  const wal = (await sql<{ bytes: string }>`select pg_wal_lsn_diff(pg_current_wal_lsn(), ${walBefore}::pg_lsn)::text as bytes`.execute(db))
    .rows[0]?.bytes;
  const size = (await sql<{ bytes: string }>`select pg_total_relation_size('gateway.audit_logs')::text as bytes`.execute(db)).rows[0]
    ?.bytes;
  console.log(
    `${name.padEnd(60)} postgres ${cpuUs.toFixed(2).padStart(6)} µs/row  WAL ${(Number(wal) / AUDIT_ROWS).toFixed(0).padStart(5)} B/row  table+indexes ${(Number(size) / AUDIT_ROWS).toFixed(0).padStart(4)} B/row  ${(ms / batches.length).toFixed(1)} ms/batch`,
  );
  await sql`truncate gateway.audit_logs`.execute(db);
  await db.destroy();
}

/** Runs `ddl` in the bench database (gateway schema). */
async function ddl(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: dbUrl.toString(), options: '-c search_path=gateway,public' });
  await client.connect();
  await client.query(text);
  await client.end();
}

console.log(`\n# Audit: ${AUDIT_ROWS} rows in batches of ${AUDIT_BATCH} (insertAuditEntries), backend CPU and WAL per row`);
await measureAudit('as migrated (pkey, tenant_time, occurred_at btree)');
await ddl('drop index audit_logs_occurred_at');
await measureAudit('without the occurred_at btree');
await ddl('create index audit_logs_occurred_at_brin on audit_logs using brin (occurred_at)');
await measureAudit('occurred_at as BRIN');
await ddl('drop index audit_logs_occurred_at_brin; drop index audit_logs_tenant_time');
await measureAudit('pkey only');
await ddl('alter table audit_logs drop constraint audit_logs_pkey');
await measureAudit('no index at all (the heap alone)');

// --- Stores (issue 5) ---

async function compareStores(): Promise<void> {
  const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
  await ensureNats(natsUrl, '.data', () => {});
  const { pool } = await openPool(CONCURRENCY, '');
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
    console.log(
      `${name.padEnd(40)} ${String(Math.round(REQUESTS / seconds)).padStart(6)} ops/s  p50 ${quantile(latencies, 0.5).toFixed(2)} ms  p99 ${quantile(latencies, 0.99).toFixed(2)} ms  CAS retries ${conflicts}`,
    );
  }

  /** One upsert with `text`; never a CAS retry. */
  const upsert = (text: string) => async (bucket: string) => {
    await pool.query(text, [bucket, INTERVAL, PERIOD_MS]);
    return 0;
  };
  console.log(`\n# Stores: ${REQUESTS} operations, ${CONCURRENCY} concurrent`);
  for (const buckets of [1, 100]) {
    await measure(`postgres upsert, ${buckets} bucket(s)`, upsert(UPSERT), buckets);
    await measure(`postgres unlogged upsert, ${buckets} bucket(s)`, upsert(UPSERT_UNLOGGED), buckets);
    await measure(`jetstream kv get+cas, ${buckets} bucket(s)`, kvConsume, buckets);
  }
  await (await nc.jetstreamManager()).streams.delete(`KV_${bucketName}`);
  await nc.close();
  await pool.end();
}

if (values.kv) await compareStores();

const admin = new pg.Client({ connectionString: baseDb });
await admin.connect();
await admin.query(`drop database if exists "${dbUrl.pathname.slice(1)}" with (force)`);
await admin.end();

// Where a keyed write's CPU goes, process by process: `npx bun loadtest/write-cost.ts` starts the
// bench's stack (loadtest/lib/bench-setup.ts) and runs (e) and (d) of `npm run bench` (POST
// /v1/contacts with a fresh Idempotency-Key, straight to sales and through the gateway) with wrk,
// then prints CPU ms per request of every service process, NATS, MinIO and each PostgreSQL
// backend grouped by application_name (`crm-<schema>` for a service's pool, the outbox relays by
// theirs) plus PostgreSQL's background processes — the whole cost of a write, relay and webhook
// ingest included. Env: WRITE_COST_SECONDS (8), WRITE_COST_ROUNDS (1), WRITE_COST_CASES (e,d),
// BENCH_CONNECTIONS (16). Figures: loadtest/README.md.
import { readdirSync, readFileSync } from 'node:fs';
import { startBenchTarget } from './lib/bench-setup.ts';
import { processTicks as ticks } from './lib/cpu.ts';
import { runWrk } from './lib/wrk.ts';

const SECONDS = Number(process.env.WRITE_COST_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const log = (m: string) => console.log(`[write-cost] ${m}`);

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
  } catch {
    return '';
  }
}

const target = await startBenchTarget('bun', log);
const { Client } = (await import('pg')).default;
const sql = new Client({ connectionString: target.env.DATABASE_URL });
await sql.connect();

/** Every process on the machine labelled: services by their role, postgres backends by application_name. */
async function labelled(): Promise<Map<number, string>> {
  const labels = new Map<number, string>();
  const rows = (await sql.query('select pid, application_name, backend_type, datname from pg_stat_activity')).rows;
  const pg = new Map<number, string>(
    rows.map((r) => [
      r.pid,
      r.datname ? `pg:${r.application_name || '(unnamed)'}${r.datname === sql.database ? '' : `@${r.datname}`}` : `pg-bg:${r.backend_type}`,
    ]),
  );
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pg.has(pid)) {
      labels.set(pid, pg.get(pid) as string);
      continue;
    }
    const cmd = cmdline(pid);
    const svc = /services\/(\w+)\//.exec(cmd)?.[1];
    if (svc) labels.set(pid, svc);
    else if (/postgres/.test(cmd)) labels.set(pid, `pg-other:${cmd.slice(0, 40)}`);
    else if (/nats-server/.test(cmd)) labels.set(pid, 'nats');
    else if (/minio/.test(cmd)) labels.set(pid, 'minio');
  }
  return labels;
}

async function measure(name: string, url: string, headers: Record<string, string>) {
  const before = await labelled();
  const t0 = new Map([...before.keys()].map((p) => [p, ticks(p) ?? 0]));
  const figures = await runWrk(
    { url, method: 'POST', headers, body: JSON.stringify({ name: 'Bench write', type: 'client' }), keyPrefix: `wc-${Date.now()}-${name}` },
    { seconds: SECONDS, connections: CONNECTIONS },
  );
  await new Promise((r) => setTimeout(r, 1500)); // let the relay, consumers and webhooks finish
  const after = await labelled();
  const byLabel = new Map<string, number>();
  for (const [pid, label] of after) {
    const d = (ticks(pid) ?? 0) - (t0.get(pid) ?? 0);
    byLabel.set(label, (byLabel.get(label) ?? 0) + d);
  }
  console.log(
    `\n${name}: ${figures.rps.toFixed(1)} req/s, p50 ${figures.p50.toFixed(1)} ms, ${figures.requests} requests, failed ${(figures.failed * 100).toFixed(1)}%`,
  );
  const rowsOut = [...byLabel].filter(([, t]) => t > 0).sort((a, b) => b[1] - a[1]);
  let total = 0;
  for (const [label, t] of rowsOut) {
    const ms = (t * 10) / figures.requests;
    total += ms;
    console.log(`  ${label.padEnd(60)} ${ms.toFixed(3)} ms/request`);
  }
  console.log(`  ${'total'.padEnd(60)} ${total.toFixed(3)} ms/request`);
}

try {
  await measure('warm e', `${target.urls.sales}/v1/contacts`, target.internal);
  const which = (process.env.WRITE_COST_CASES ?? 'e,d').split(',');
  for (let i = 0; i < Number(process.env.WRITE_COST_ROUNDS ?? 1); i += 1) {
    if (which.includes('e')) await measure('(e) direct to sales', `${target.urls.sales}/v1/contacts`, target.internal);
    if (which.includes('d')) await measure('(d) via gateway', `${target.urls.gateway}/v1/contacts`, { 'x-api-key': target.tenant.api_key });
  }
} finally {
  await sql.end();
  await target.stop();
}

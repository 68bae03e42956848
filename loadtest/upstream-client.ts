// What the gateway's own HTTP/1.1 client saves against fetch: `npx bun loadtest/upstream-client.ts`
// starts the bench's stack (loadtest/lib/bench-setup.ts; its gateway uses the default,
// UPSTREAM_READ_CLIENT=http1) and one more gateway replica with UPSTREAM_READ_CLIENT=fetch, then
// alternates the two on GET /v1/contacts/{id} — closed loop (wrk, BENCH_CONNECTIONS = 16, 5 s) and
// open loop at a fixed rate (CLIENT_RATE, 1500/s, 8 s) — and on the bench's keyed POST /v1/contacts
// (closed loop, 5 s; each request a fresh Idempotency-Key) for CLIENT_ROUNDS (4) rounds, and prints
// the gateway's CPU ms per request (its /proc utime + stime over the requests) with req/s, p50 and
// p99. The fixed rate is the cleaner figure: at the same rate both replicas wake up as often, so
// the difference is the client. Figures: loadtest/README.md, "Gateway upstream client".
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort, repoRoot, waitReady } from '@crm/stack';
import { startBenchTarget } from './lib/bench-setup.ts';
import { openLoopAtRate, spread } from './lib/bench-targets.ts';
import { processTicks } from './lib/cpu.ts';
import { type LoadFigures, runWrk, wrkBinary } from './lib/wrk.ts';

const ROUNDS = Number(process.env.CLIENT_ROUNDS ?? 4);
const RATE = Number(process.env.CLIENT_RATE ?? 1500);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const log = (m: string) => console.log(`[upstream-client] ${m}`);

wrkBinary(log);
const target = await startBenchTarget('bun', log);
const port = await freePort();
const child = spawn(join(repoRoot, 'node_modules', '.bin', 'bun'), [join(repoRoot, 'services', 'gateway', 'src', 'main.ts')], {
  cwd: repoRoot,
  env: { ...process.env, ...target.env, GATEWAY_PORT: String(port), GATEWAY_OPS_PORT: '0', UPSTREAM_READ_CLIENT: 'fetch' },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const viaFetch = { url: `http://127.0.0.1:${port}`, pid: child.pid as number };
await waitReady({ name: 'gateway', url: viaFetch.url, child, stop: async () => null });
const own = { url: target.urls.gateway, pid: (await target.watched.find((w) => w.label === 'gateway')?.pids())?.[0] as number };

const replicas = { http1: own, fetch: viaFetch } as const;
type Row = { cpu: number; figures: LoadFigures };
const results: Record<string, Row[]> = {};

/** Runs so far: each keyed run's Idempotency-Keys start with its own number. */
let writes = 0;
async function measure(name: keyof typeof replicas, mode: 'closed' | 'open' | 'write'): Promise<void> {
  const replica = replicas[name];
  const apiKey = { 'x-api-key': target.tenant.api_key };
  const shape = { url: replica.url + target.paths.id, method: 'GET' as const, headers: apiKey };
  writes += 1;
  const before = processTicks(replica.pid) ?? 0;
  const figures =
    mode === 'closed'
      ? await runWrk(shape, { seconds: 5, connections: CONNECTIONS })
      : mode === 'open'
        ? await openLoopAtRate(shape, { seconds: 8, rate: RATE })
        : await runWrk(
            {
              url: `${replica.url}/v1/contacts`,
              method: 'POST',
              headers: apiKey,
              body: JSON.stringify({ name: 'Upstream client write', type: 'client' }),
              keyPrefix: `upstream-${process.pid}-${writes}`,
            },
            { seconds: 5, connections: CONNECTIONS },
          );
  const cpu = (((processTicks(replica.pid) ?? 0) - before) * 10) / Math.max(1, figures.requests);
  const key = `${mode} ${name}`;
  results[key] ??= [];
  results[key].push({ cpu, figures });
  log(
    `${key.padEnd(14)} ${figures.rps.toFixed(0).padStart(6)} req/s  gateway ${cpu.toFixed(3)} ms/request  p50 ${figures.p50.toFixed(2)}  p99 ${figures.p99.toFixed(2)}`,
  );
}

try {
  log('warming up both replicas…');
  for (const name of ['http1', 'fetch'] as const) await measure(name, 'closed');
  for (const key of Object.keys(results)) delete results[key];
  for (let round = 0; round < ROUNDS; round += 1) {
    // Alternate which goes first, so a drift of the machine does not always favour one.
    const order = round % 2 === 0 ? (['http1', 'fetch'] as const) : (['fetch', 'http1'] as const);
    for (const mode of ['closed', 'open', 'write'] as const) for (const name of order) await measure(name, mode);
  }
  console.log(`\n${'case'.padEnd(16)} gateway CPU ms/request (min / median / max)   req/s   p50   p99 (medians)`);
  for (const [key, rows] of Object.entries(results)) {
    const cpu = spread(rows.map((r) => r.cpu));
    const med = (pick: (f: LoadFigures) => number) => spread(rows.map((r) => pick(r.figures))).median.toFixed(2);
    console.log(
      `${key.padEnd(16)} ${cpu.min.toFixed(3)} / ${cpu.median.toFixed(3)} / ${cpu.max.toFixed(3)}                  ${spread(
        rows.map((r) => r.figures.rps),
      )
        .median.toFixed(0)
        .padStart(6)}  ${med((f) => f.p50)}  ${med((f) => f.p99)}`,
    );
  }
  for (const mode of ['closed', 'open', 'write']) {
    const own = spread((results[`${mode} http1`] ?? []).map((r) => r.cpu)).median;
    const other = spread((results[`${mode} fetch`] ?? []).map((r) => r.cpu)).median;
    console.log(
      `${mode === 'write' ? 'keyed writes' : `${mode} loop`}: the own client saves ${((other - own) * 1000).toFixed(0)} µs of gateway CPU per ${mode === 'write' ? 'write' : 'read'} (${(((other - own) / other) * 100).toFixed(0)} %)`,
    );
  }
} finally {
  child.kill('SIGTERM');
  await target.stop();
}

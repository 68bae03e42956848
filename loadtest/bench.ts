// `npm run bench`: on this machine, in one run, measures requests/s and p50/p99 of
//   (a) GET /v1/contacts/{id} straight to sales (internal headers set by k6),
//   (b) the same through the gateway with every policy on (auth, rate limit, audit, request id),
//   (c) the same through Debian's nginx as a bare reverse proxy to sales (nginx sets the headers),
//   (d) POST /v1/contacts through the gateway with an Idempotency-Key,
// then the p99 of (b) at half its peak rate (open-loop), and checks the targets:
// b/a ≥ 0.6, b ≥ 0.8 × c, p99(b at half peak) < 20 ms. BENCH_PROFILE=1 (or a missed gateway
// target) adds a CPU profile of the gateway under the (b) load.
// Knobs: BENCH_DURATION (20s), BENCH_VUS (16), NGINX_WORKERS (1, like the one gateway process).

import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@crm/stack';
import { startStack } from '@crm/testing';
import { type BenchCase, type BenchFigures, benchFigures, benchRun } from './lib/bench-targets.ts';
import { k6Binary, resultsDir, stamp } from './lib/k6.ts';
import { startNginx } from './lib/nginx.ts';
import { profileGateway, profileHead } from './lib/profile.ts';
import { provisionTenant, raisedLimits } from './lib/target.ts';

const log = (m: string) => console.log(`[bench] ${m}`);
const duration = process.env.BENCH_DURATION ?? '20s';
const vus = Number(process.env.BENCH_VUS ?? 16);
const when = stamp();

k6Binary();
log('starting a stack of its own…');
const stack = await startStack({ env: { LOG_LEVEL: 'warn' } });
const nginxPort = await freePort();
let nginx: Awaited<ReturnType<typeof startNginx>> | undefined;
const out: string[] = [];
const say = (line = '') => {
  console.log(line);
  out.push(line);
};

try {
  const tenant = await provisionTenant(stack, 'bench', raisedLimits);
  const created = await fetch(`${stack.gatewayUrl}/v1/contacts`, {
    method: 'POST',
    headers: { 'x-api-key': tenant.api_key, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench contact', type: 'client', email: 'bench@example.test' }),
  });
  if (created.status !== 201) throw new Error(`could not create the bench contact: ${created.status} ${await created.text()}`);
  const contactId = ((await created.json()) as { data: { id: number } }).data.id;
  const path = `/v1/contacts/${contactId}`;
  const internal = { 'x-internal-token': stack.internalToken, 'x-tenant-id': tenant.tenant_id };
  nginx = await startNginx([{ port: nginxPort, upstreams: [new URL(stack.processes.sales.url).host], setHeaders: internal }], {
    workers: Number(process.env.NGINX_WORKERS ?? 1),
    log,
  });
  const cases: BenchCase[] = [
    { key: 'a', label: 'GET direct to sales', url: stack.processes.sales.url + path, method: 'GET', headers: internal },
    {
      key: 'b',
      label: 'GET via gateway (all policies)',
      url: stack.gatewayUrl + path,
      method: 'GET',
      headers: { 'x-api-key': tenant.api_key },
    },
    { key: 'c', label: 'GET via nginx (bare proxy)', url: `http://127.0.0.1:${nginxPort}${path}`, method: 'GET', headers: {} },
    {
      key: 'd',
      label: 'POST via gateway + Idempotency-Key',
      url: `${stack.gatewayUrl}/v1/contacts`,
      method: 'POST',
      headers: { 'x-api-key': tenant.api_key },
    },
  ];
  log('warming up…');
  for (const c of cases.slice(0, 3)) await benchRun(c, { vus: 4, duration: '4s', name: `bench-warmup-${c.key}` });

  const figures: Record<string, BenchFigures> = {};
  for (const c of cases) {
    log(`(${c.key}) ${c.label}: ${vus} VUs for ${duration}…`);
    figures[c.key] = benchFigures(await benchRun(c, { vus, duration }));
  }
  const halfRate = Math.max(1, Math.floor(figures.b!.rps / 2));
  log(`(b½) gateway GET at ${halfRate} req/s (half its peak) for ${duration}…`);
  figures.half = benchFigures(await benchRun(cases[1]!, { vus, duration, rate: halfRate, name: 'bench-b-half' }));

  const f = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '-');
  say();
  say(
    `bench ${when} — ${cpus().length} cores (${cpus()[0]?.model ?? 'cpu'}), k6 ${vus} VUs × ${duration} per case, nginx workers ${process.env.NGINX_WORKERS ?? 1}`,
  );
  say(
    `${'case'.padEnd(44)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p90 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'failed'.padStart(7)}`,
  );
  const row = (label: string, x: BenchFigures) =>
    say(
      `${label.padEnd(44)} ${f(x.rps).padStart(8)} ${f(x.p50, 2).padStart(8)} ${f(x.p90, 2).padStart(8)} ${f(x.p99, 2).padStart(8)} ${`${f(x.failed * 100, 2)}%`.padStart(7)}`,
    );
  for (const c of cases) row(`(${c.key}) ${c.label}`, figures[c.key]!);
  row(`(b) at half peak: ${halfRate} req/s`, figures.half);
  const { a, b, c } = figures as Record<'a' | 'b' | 'c', BenchFigures>;
  const targets = [
    { name: 'b/a ≥ 0.6', value: b.rps / a.rps, ok: b.rps / a.rps >= 0.6 },
    { name: 'c/a (reference)', value: c.rps / a.rps, ok: true },
    { name: 'b/c ≥ 0.8', value: b.rps / c.rps, ok: b.rps / c.rps >= 0.8 },
    { name: 'p99(b at half peak) < 20 ms', value: figures.half.p99, ok: figures.half.p99 < 20 },
  ];
  say();
  for (const t of targets) say(`${t.ok ? 'ok  ' : 'MISS'} ${t.name.padEnd(30)} ${f(t.value, 2)}`);
  writeFileSync(
    join(resultsDir, `bench-${when}.json`),
    JSON.stringify({ when, cores: cpus().length, vus, duration, halfRate, figures, targets }, null, 2),
  );

  if (process.env.BENCH_PROFILE === '1' || targets.some((t) => !t.ok)) {
    const dir = join(resultsDir, `profile-${when}`);
    log(`profiling a gateway replica under the (b) load (bun --cpu-prof-md → ${dir})…`);
    const profile = await profileGateway(stack.env, dir, (url) =>
      benchRun({ ...cases[1]!, url: url + path }, { vus, duration: '15s', name: 'bench-profile' }),
    );
    if (profile) {
      say();
      say(`gateway CPU profile (${profile.replace(/.*loadtest\//, 'loadtest/')}), top of the self-time table:`);
      say(profileHead(profile));
    }
  }
  writeFileSync(join(resultsDir, `bench-${when}.txt`), `${out.join('\n')}\n`);
} finally {
  await nginx?.stop();
  await stack.stop();
}

// Gateway overhead (issue 5): requests/s and p50/p99 of GET /v1/contacts/{id} sent straight to
// sales (with the internal headers the gateway would add) and through the gateway with every
// policy on (HTTPS check, API key, rate limit in PostgreSQL, request id, audit), in one run
// against one stack of its own. Closed loop of CONCURRENCY workers per phase, phases
// interleaved (direct, gateway, direct, gateway) so drifting machine load hits both alike.
// Usage: bun loadtest/gateway-overhead.ts [--seconds 8] [--concurrency 16] [--rounds 2]
// Loopback only; bounded by time and a request cap; stops its stack at the end.
import { parseArgs } from 'node:util';
import { startStack } from '@crm/testing';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '8' },
    concurrency: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '2' },
  },
});
const SECONDS = Math.min(Number(values.seconds), 60);
const CONCURRENCY = Math.min(Number(values.concurrency), 64);
const ROUNDS = Math.min(Number(values.rounds), 5);
const MAX_REQUESTS_PER_PHASE = 200_000;

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function closedLoop(url: string, headers: Record<string, string>, seconds: number): Promise<Figures> {
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline && latencies.length < MAX_REQUESTS_PER_PHASE) {
        const t0 = performance.now();
        const res = await fetch(url, { headers });
        await res.arrayBuffer();
        latencies.push(performance.now() - t0);
        if (res.status !== 200) errors++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] as number;
  return { rps: latencies.length / elapsed, p50: at(0.5), p99: at(0.99), errors };
}

const fmt = (f: Figures) =>
  `${f.rps.toFixed(0).padStart(6)} req/s   p50 ${f.p50.toFixed(2).padStart(6)} ms   p99 ${f.p99.toFixed(2).padStart(7)} ms   non-200 ${f.errors}`;

const stack = await startStack({ env: { LOG_LEVEL: 'warn' } });
try {
  const tenant = await stack.createTenant({ limits: { read_per_minute: 1_000_000, write_per_minute: 1_000_000 } });
  const created = await tenant.request('POST', '/v1/contacts', { body: { name: 'Overhead Ltd', type: 'client' } });
  if (created.status !== 201) throw new Error(`could not create the contact: ${created.status} ${created.text}`);
  const path = `/v1/contacts/${created.body.data.id}`;
  const direct = {
    url: stack.processes.sales.url + path,
    headers: { 'x-internal-token': stack.internalToken, 'x-tenant-id': tenant.tenantId },
  };
  const gateway = { url: stack.gatewayUrl + path, headers: { 'x-api-key': tenant.apiKey } };

  await closedLoop(direct.url, direct.headers, 2); // warm-up (JIT, pools, caches)
  await closedLoop(gateway.url, gateway.headers, 2);
  const results: { direct: Figures; gateway: Figures }[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const d = await closedLoop(direct.url, direct.headers, SECONDS);
    const g = await closedLoop(gateway.url, gateway.headers, SECONDS);
    results.push({ direct: d, gateway: g });
    console.log(`round ${round + 1}  direct  ${fmt(d)}`);
    console.log(`round ${round + 1}  gateway ${fmt(g)}`);
  }
  const mean = (pick: (r: { direct: Figures; gateway: Figures }) => number) => results.reduce((s, r) => s + pick(r), 0) / results.length;
  const directRps = mean((r) => r.direct.rps);
  const gatewayRps = mean((r) => r.gateway.rps);
  console.log(
    `\nGET ${path}, ${CONCURRENCY} concurrent, ${ROUNDS} × ${SECONDS}s per side, load average ${(await import('node:os')).loadavg()[0]?.toFixed(1)}`,
  );
  console.log(
    `direct to sales : ${directRps.toFixed(0)} req/s, p50 ${mean((r) => r.direct.p50).toFixed(2)} ms, p99 ${mean((r) => r.direct.p99).toFixed(2)} ms`,
  );
  console.log(
    `through gateway : ${gatewayRps.toFixed(0)} req/s, p50 ${mean((r) => r.gateway.p50).toFixed(2)} ms, p99 ${mean((r) => r.gateway.p99).toFixed(2)} ms`,
  );
  console.log(`gateway/direct throughput ratio: ${(gatewayRps / directRps).toFixed(2)}`);
  const audited = await stack.sql('select count(*)::int as n from gateway.audit_logs where tenant_id = $1', [tenant.tenantId]);
  console.log(`audit records written during the run: ${audited.rows[0].n}`);
} finally {
  await stack.stop();
}

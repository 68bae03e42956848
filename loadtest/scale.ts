// `npm run scale`: two replicas of the gateway and of every service on loopback, each kind behind
// an nginx round-robin balancer (the processes reach each other through the balancers too).
//   phase A, all replicas up: idempotency with one key sent to both gateway replicas at once,
//     the rate-limit scenario (limits exact across replicas), crud-mix with a webhook that must
//     receive every contact.created exactly once;
//   phase B: crud-mix again, and one replica of each kind is killed (SIGKILL) a third of the way
//     in; the run must complete and no write k6 saw accepted may be missing from the database,
//     and every contact.created must still be delivered (at least once).
// Knobs: SCALE_DURATION (60s, phase B), SCALE_KILL_SIGNAL (SIGKILL), VUS, WEBHOOK_WAIT_S (120).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProcessName } from '@crm/stack';
import { type Cluster, startCluster } from './lib/cluster.ts';
import { type K6Run, k6Binary, resultsDir, stamp } from './lib/k6.ts';
import { passed, printTable } from './lib/report.ts';
import { runScenario } from './lib/scenarios.ts';
import { type LoadTenant, provisionTenant, raisedLimits, type Target } from './lib/target.ts';
import { startWebhookReceiver } from './lib/webhook-receiver.ts';

interface Verdict {
  name: string;
  ok: boolean;
  detail: string;
}

const log = (m: string) => console.log(`[scale] ${m}`);
const seconds = (s: string) => Number(s.replace(/s$/, ''));
const phaseBDuration = process.env.SCALE_DURATION ?? '60s';
const killSignal = (process.env.SCALE_KILL_SIGNAL ?? 'SIGKILL') as NodeJS.Signals;
const verdicts: Verdict[] = [];
/** Ten processes, nginx and k6 share the machine here: this run checks correctness, not latency. */
const relaxedLatency = { P95_MS: '5000', P99_MS: '20000', READ_P95_MS: '5000' };
const runs: K6Run[] = [];
const killed: string[] = [];

k6Binary();
const receiver = startWebhookReceiver();
log('starting 2 replicas of each process behind nginx…');
const cluster = await startCluster({ replicas: 2, log });
const target: Target = { gatewayUrl: cluster.gatewayUrl, adminToken: cluster.adminToken, owned: true, stop: async () => {} };
log(`cluster ready: gateway balancer ${cluster.gatewayUrl}, logs in ${cluster.logDir}`);

try {
  verdicts.push(await idempotencyAcrossReplicas(cluster));
  log('phase A: rate-limit through the balancer…');
  const rateLimit = await runScenario(target, 'rate-limit', { name: 'scale-rate-limit' });
  runs.push(rateLimit);
  verdicts.push({ name: 'rate limits exact across 2 gateway replicas', ok: passed(rateLimit), detail: verdictDetails(rateLimit) });

  log('phase A: crud-mix with a webhook, all replicas up…');
  const a = await mixWithWebhook('a', { DURATION: '30s', ...relaxedLatency });
  runs.push(a.run);
  verdicts.push(...(await writesKept(a.run, a.tenant, 'phase A')));
  verdicts.push(await webhooksDelivered(a.tenant, 'a', true));

  // A third of the way into the load, plus ~5 s for k6's setup (seeding).
  const killAfterS = seconds(phaseBDuration) / 3 + 5;
  log(`phase B: crud-mix for ${phaseBDuration}; ${killSignal} to one replica of each kind after ${killAfterS}s…`);
  const killer = setTimeout(() => void killOneOfEach(cluster), killAfterS * 1000);
  const b = await mixWithWebhook('b', {
    DURATION: phaseBDuration,
    MAX_FAILED: '0.05',
    P95_MS: '5000',
    P99_MS: '20000',
    READ_P95_MS: '5000',
    WRITE_RETRIES: '12',
  });
  clearTimeout(killer);
  runs.push(b.run);
  verdicts.push({ name: 'phase B: one replica of each kind killed mid-run', ok: killed.length === 5, detail: killed.join(', ') || 'none' });
  verdicts.push({ name: 'phase B run completed (k6 thresholds)', ok: b.run.exitCode === 0, detail: `k6 exit code ${b.run.exitCode}` });
  verdicts.push(...(await writesKept(b.run, b.tenant, 'phase B')));
  verdicts.push(await webhooksDelivered(b.tenant, 'b', false));
} catch (error) {
  verdicts.push({ name: 'scale run', ok: false, detail: String(error) });
} finally {
  receiver.stop();
  log('stopping the cluster…');
  await cluster.stop();
}

const lines: string[] = [];
const out = (line: string) => {
  console.log(line);
  lines.push(line);
};
printTable(runs, out);
out('');
for (const v of verdicts) out(`${v.ok ? 'ok  ' : 'FAIL'} ${v.name}: ${v.detail}`);
writeFileSync(join(resultsDir, `scale-${stamp()}.txt`), `${lines.join('\n')}\n`);
process.exit(verdicts.every((v) => v.ok) ? 0 : 1);

function verdictDetails(run: K6Run): string {
  return (run.summary?.verdicts ?? []).map((v) => `${v.name}: ${v.detail}`).join('; ') || `k6 exit ${run.exitCode}`;
}

/** A crud-mix run for a fresh tenant whose webhook (contact.created) points at the receiver. */
async function mixWithWebhook(label: string, env: Record<string, string>) {
  const tenant = await provisionTenant(target, `scale ${label}`, raisedLimits);
  const hook = await fetch(`${cluster.gatewayUrl}/v1/webhooks`, {
    method: 'POST',
    headers: { 'x-api-key': tenant.api_key, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `${receiver.url}/${label}`, events: ['contact.created'], description: `scale ${label}` }),
  });
  if (hook.status !== 201) throw new Error(`creating the webhook failed: ${hook.status} ${await hook.text()}`);
  const run = await runScenario(target, 'crud-mix', { name: `scale-crud-mix-${label}`, tenants: [tenant], env: { VUS: '12', ...env } });
  return { run, tenant };
}

/** Kills the second replica of every kind, so each kind keeps running on its first. */
async function killOneOfEach(c: Cluster) {
  for (const name of Object.keys(c.pools) as ProcessName[]) {
    const victim = c.pools[name].replicas[1];
    if (!victim) continue;
    log(`${killSignal} → ${name} replica 2 (${victim.url})`);
    await victim.stop(killSignal);
    killed.push(`${name} (${new URL(victim.url).port})`);
  }
}

/** Rows in the database against the writes k6 saw accepted: none may be missing. */
async function writesKept(run: K6Run, tenant: LoadTenant, phase: string): Promise<Verdict[]> {
  const count = (metric: string) => run.summary?.metrics[metric]?.values.count ?? 0;
  const rows = async (table: string) =>
    Number((await cluster.sql(`select count(*)::int as n from ${table} where tenant_id = $1`, [tenant.tenant_id])).rows[0].n);
  const checks = [
    { what: 'contacts', table: 'sales.contacts', accepted: count('accepted_contacts') + count('seeded_contacts') },
    { what: 'orders', table: 'sales.orders', accepted: count('accepted_orders') },
    { what: 'documents', table: 'documents.documents', accepted: count('accepted_documents') },
  ];
  const out: Verdict[] = [];
  for (const c of checks) {
    const stored = await rows(c.table);
    out.push({
      name: `${phase}: no accepted ${c.what} write lost`,
      ok: stored >= c.accepted && c.accepted > 0,
      detail: `${c.accepted} accepted by k6, ${stored} rows (${stored - c.accepted} extra from writes whose answer was lost)`,
    });
  }
  return out;
}

/** Waits until the receiver has every contact.created of the tenant; `exact` also forbids duplicates. */
async function webhooksDelivered(tenant: LoadTenant, label: string, exact: boolean): Promise<Verdict> {
  const expected = Number(
    (await cluster.sql('select count(*)::int as n from sales.contacts where tenant_id = $1', [tenant.tenant_id])).rows[0].n,
  );
  const deadline = Date.now() + Number(process.env.WEBHOOK_WAIT_S ?? 120) * 1000;
  const tally = () => receiver.tally((r) => r.path.endsWith(`/${label}`) && r.type === 'contact.created');
  while (tally().distinct < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1000));
  await new Promise((r) => setTimeout(r, 3000));
  const t = tally();
  const ok = t.distinct === expected && (!exact || t.duplicates === 0);
  return {
    name: `phase ${label.toUpperCase()}: webhook delivery ${exact ? 'exactly once' : 'at least once'} across 2 webhooks replicas`,
    ok,
    detail: `${expected} contacts created, ${t.distinct} distinct contact.created received, ${t.duplicates} duplicate deliveries`,
  };
}

/** One Idempotency-Key sent 10 times at once, alternating between the two gateway replicas. */
async function idempotencyAcrossReplicas(c: Cluster): Promise<Verdict> {
  const tenant = await provisionTenant(target, 'scale idempotency', raisedLimits);
  const name = `Idem ${crypto.randomUUID()}`;
  const key = `scale-${crypto.randomUUID()}`;
  const replicas = c.pools.gateway.replicas.map((r) => r.url);
  const send = (url: string) =>
    fetch(`${url}/v1/contacts`, {
      method: 'POST',
      headers: { 'x-api-key': tenant.api_key, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ name, type: 'client' }),
    }).then(async (r) => ({ status: r.status, replayed: r.headers.get('idempotent-replayed') === 'true', body: (await r.json()) as any }));
  const first = await Promise.all(Array.from({ length: 10 }, (_, i) => send(replicas[i % replicas.length]!)));
  await new Promise((r) => setTimeout(r, 2000));
  const again = await Promise.all(replicas.map((url) => send(url)));
  const all = [...first, ...again];
  const created = all.filter((r) => r.status === 201);
  const ids = new Set(created.map((r) => r.body.data.id));
  const originals = created.filter((r) => !r.replayed).length;
  const statuses = all.map((r) => r.status).join(',');
  const rows = Number(
    (await c.sql('select count(*)::int as n from sales.contacts where tenant_id = $1 and name = $2', [tenant.tenant_id, name])).rows[0].n,
  );
  const ok =
    rows === 1 &&
    ids.size === 1 &&
    originals === 1 &&
    all.every((r) => r.status === 201 || r.status === 409) &&
    again.every((r) => r.replayed);
  return {
    name: 'idempotency exact across 2 gateway replicas',
    ok,
    detail: `statuses ${statuses}; ${originals} original 201, ${ids.size} distinct id, ${rows} row`,
  };
}

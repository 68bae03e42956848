// `npm run scale`: two replicas of the gateway and of every service on loopback, each kind behind
// an nginx round-robin balancer (the processes reach each other through the balancers too), on a
// three-node NATS JetStream cluster of its own (every process gets the three URLs; the events
// stream has three replicas).
//   phase A, all replicas up: idempotency with one key sent to both gateway replicas at once,
//     the rate-limit scenario (limits exact across replicas), crud-mix with a webhook on every
//     event type that must receive every event written exactly once;
//   phase B: crud-mix again; one replica of each kind is killed (SIGKILL) a third of the way in,
//     and at half-time the NATS node leading the events stream is SIGKILLed and started again
//     SCALE_NATS_OUTAGE_S later; a probe calls every kind through the gateway balancer meanwhile
//     (outage lengths, time to recover). The run must complete; the clients retry every keyed
//     write with the same key until the answer is not a 5xx (WRITE_RETRIES 200), so the contacts,
//     orders and documents rows must equal the writes they saw accepted, exactly; every event
//     written must be delivered (at least once: duplicates are counted, and each must come from
//     the webhooks replica killed after the receiver's 2xx); the surviving processes must have
//     carried on without a restart.
// Knobs: SCALE_DURATION (60s, phase B), SCALE_KILL_SIGNAL (SIGKILL), SCALE_NATS_OUTAGE_S (8),
// WEBHOOK_WAIT_S (120), SCALE_PROBE_MS (250).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ProcessName, streamCluster } from '@crm/stack';
import { startReceiver } from '@crm/testing';
import { type Cluster, startCluster } from './lib/cluster.ts';
import { type K6Run, k6Binary, resultsDir, stamp } from './lib/k6.ts';
import { passed, printTable } from './lib/report.ts';
import { runScenario } from './lib/scenarios.ts';
import { type LoadTenant, provisionTenant, raisedLimits, type Target } from './lib/target.ts';

interface Verdict {
  name: string;
  ok: boolean;
  detail: string;
}

const log = (m: string) => console.log(`[scale] ${m}`);
const seconds = (s: string) => Number(s.replace(/s$/, ''));
const phaseBDuration = process.env.SCALE_DURATION ?? '60s';
const killSignal = (process.env.SCALE_KILL_SIGNAL ?? 'SIGKILL') as NodeJS.Signals;
const natsOutageS = Number(process.env.SCALE_NATS_OUTAGE_S ?? 8);
const verdicts: Verdict[] = [];
/** Ten processes, nginx and k6 share the machine here: this run checks correctness, not latency. */
const relaxedLatency = { P95_MS: '5000', P99_MS: '20000', READ_P95_MS: '5000' };
const runs: K6Run[] = [];
const killed: string[] = [];
/** When each kind's second replica was killed (epoch ms). */
const killedAt = new Map<ProcessName, number>();
/** Clients retry a keyed write with the same key until the answer is not a 5xx (k6's mix, WRITE_RETRIES). */
const retryUntilAnswered = { WRITE_RETRIES: '200' };
const probeEveryMs = Number(process.env.SCALE_PROBE_MS ?? 250);
/** What happened to the NATS node killed in phase B, and how long recovery took. */
const natsFault: {
  node?: string;
  killedAt?: number;
  restartedAt?: number;
  newLeaderAfterMs?: number;
  currentAfterMs?: number;
  error?: string;
} = {};

k6Binary();
const receiver = await startReceiver({ reply: () => ({ status: 204 }) });
log('starting a 3-node NATS cluster and 2 replicas of each process behind nginx…');
const cluster = await startCluster({ replicas: 2, natsNodes: 3, log });
const target: Target = { gatewayUrl: cluster.gatewayUrl, adminToken: cluster.adminToken, owned: true, stop: async () => {} };
log(`cluster ready: gateway balancer ${cluster.gatewayUrl}, logs in ${cluster.logDir}`);

try {
  verdicts.push(await idempotencyAcrossReplicas(cluster));
  log('phase A: rate-limit through the balancer…');
  const rateLimit = await runScenario(target, 'rate-limit', { name: 'scale-rate-limit' });
  runs.push(rateLimit);
  verdicts.push({ name: 'rate limits exact across 2 gateway replicas', ok: passed(rateLimit), detail: verdictDetails(rateLimit) });

  log('phase A: crud-mix with a webhook, all replicas up…');
  const a = await mixWithWebhook('a', { DURATION: '30s', ...relaxedLatency, ...retryUntilAnswered });
  runs.push(a.run);
  verdicts.push(...(await writesKept(a.run, a.tenant, 'phase A')));
  verdicts.push(await eventsDelivered(a.tenant, 'a', true));

  // A third of the way into the load, plus ~5 s for k6's setup (seeding).
  const killAfterS = seconds(phaseBDuration) / 3 + 5;
  log(`phase B: crud-mix for ${phaseBDuration}; ${killSignal} to one replica of each kind after ${killAfterS}s…`);
  const killer = setTimeout(() => void killOneOfEach(cluster), killAfterS * 1000);
  const natsKillAfterS = seconds(phaseBDuration) / 2 + 5;
  log(`phase B: SIGKILL to the NATS node leading the events stream after ${natsKillAfterS}s, restarted ${natsOutageS}s later…`);
  const pidsBefore = survivorPids(cluster);
  const probe = await startProbe();
  let natsFaultDone: Promise<void> = Promise.resolve();
  const natsKiller = setTimeout(() => {
    natsFaultDone = killNatsLeader(cluster);
  }, natsKillAfterS * 1000);
  const b = await mixWithWebhook('b', {
    DURATION: phaseBDuration,
    MAX_FAILED: '0.05',
    P95_MS: '5000',
    P99_MS: '20000',
    READ_P95_MS: '5000',
    ...retryUntilAnswered,
  });
  clearTimeout(killer);
  clearTimeout(natsKiller);
  await natsFaultDone;
  await probe.stop();
  runs.push(b.run);
  verdicts.push({ name: 'phase B: one replica of each kind killed mid-run', ok: killed.length === 5, detail: killed.join(', ') || 'none' });
  verdicts.push(natsFaultVerdict());
  verdicts.push({ name: 'phase B run completed (k6 thresholds)', ok: b.run.exitCode === 0, detail: `k6 exit code ${b.run.exitCode}` });
  verdicts.push(...(await writesKept(b.run, b.tenant, 'phase B')));
  verdicts.push(await eventsDelivered(b.tenant, 'b', false));
  verdicts.push(outages(probe.samples));
  verdicts.push(await natsRecovery(b.tenant, 'b'));
  verdicts.push(survivorsCarriedOn(cluster, pidsBefore));
} catch (error) {
  verdicts.push({ name: 'scale run', ok: false, detail: String(error) });
} finally {
  await receiver.close();
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

/** A crud-mix run for a fresh tenant whose webhook (every event type) points at the receiver. */
async function mixWithWebhook(label: string, env: Record<string, string>) {
  const tenant = await provisionTenant(target, `scale ${label}`, raisedLimits);
  const hook = await fetch(`${cluster.gatewayUrl}/v1/webhooks`, {
    method: 'POST',
    headers: { 'x-api-key': tenant.api_key, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `${receiver.url}/${label}`, description: `scale ${label}` }),
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
    killedAt.set(name, Date.now());
    await victim.stop(killSignal);
    killed.push(`${name} (${new URL(victim.url).port})`);
  }
}

/**
 * Rows in the database against the writes k6 saw accepted: equal, exactly. The clients retried
 * every keyed write with its key until they had an answer (none left unsettled), and the services
 * record a keyed write's answer in the write's own transaction (contract §21), so a write whose
 * answer was lost with a killed process is answered from its record, never executed twice.
 */
async function writesKept(run: K6Run, tenant: LoadTenant, phase: string): Promise<Verdict[]> {
  const count = (metric: string) => run.summary?.metrics[metric]?.values.count ?? 0;
  const rows = async (table: string) =>
    Number((await cluster.sql(`select count(*)::int as n from ${table} where tenant_id = $1`, [tenant.tenant_id])).rows[0].n);
  const checks = [
    { what: 'contacts', table: 'sales.contacts', accepted: count('accepted_contacts') + count('seeded_contacts') },
    { what: 'orders', table: 'sales.orders', accepted: count('accepted_orders') },
    { what: 'documents', table: 'documents.documents', accepted: count('accepted_documents') },
  ];
  const unsettled = count('unsettled_writes');
  const out: Verdict[] = [
    {
      name: `${phase}: every keyed write retried with its key until answered`,
      ok: unsettled === 0,
      detail: `${count('write_retries')} retries, ${count('idempotent_replays')} answers replayed, ${unsettled} writes left without an answer`,
    },
  ];
  for (const c of checks) {
    const stored = await rows(c.table);
    out.push({
      name: `${phase}: ${c.what} rows = writes accepted, exactly`,
      ok: stored === c.accepted && c.accepted > 0,
      detail: `${c.accepted} accepted by k6 → ${stored} rows (${stored - c.accepted >= 0 ? '+' : ''}${stored - c.accepted})`,
    });
  }
  return out;
}

/** Every event of the tenant the services wrote (their outboxes), with when it was written and published. */
async function eventsWritten(tenant: LoadTenant) {
  const { rows } = await cluster.sql(
    ['sales', 'catalog', 'documents']
      .map((schema) => `select id, type, created_at, published_at from ${schema}.outbox where tenant_id = $1`)
      .join(' union all '),
    [tenant.tenant_id],
  );
  return rows as { id: string; type: string; created_at: Date; published_at: Date | null }[];
}

/** The p-th percentile (nearest rank) of `values`; 0 when there are none. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number);
}

/**
 * Waits until the receiver has every event the tenant's writes produced (the outboxes of sales,
 * catalog and documents); `exact` also forbids duplicates. Reports events written vs distinct
 * events delivered, per type, and the publish and end-to-end delays.
 */
async function eventsDelivered(tenant: LoadTenant, label: string, exact: boolean): Promise<Verdict> {
  const deadline = Date.now() + Number(process.env.WEBHOOK_WAIT_S ?? 120) * 1000;
  const mine = (r: { path: string }) => r.path.endsWith(`/${label}`);
  let written = await eventsWritten(tenant);
  const missing = () => {
    const got = new Set(receiver.received.filter(mine).map((r) => r.id));
    return written.filter((e) => !got.has(e.id));
  };
  while (missing().length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1000));
    written = await eventsWritten(tenant);
  }
  await new Promise((r) => setTimeout(r, 3000));
  written = await eventsWritten(tenant);
  const t = receiver.tally(mine);
  const lost = missing();
  const firstReceipt = new Map<string, number>();
  for (const r of receiver.received.filter(mine)) if (!firstReceipt.has(r.id)) firstReceipt.set(r.id, r.receivedAt);
  const publishMs = written.filter((e) => e.published_at).map((e) => (e.published_at as Date).getTime() - e.created_at.getTime());
  const endToEndMs = written.filter((e) => firstReceipt.has(e.id)).map((e) => (firstReceipt.get(e.id) as number) - e.created_at.getTime());
  const byType = new Map<string, number>();
  for (const e of written) byType.set(e.type, (byType.get(e.type) ?? 0) + 1);
  // contact.created: one per stored contact, each webhook-id received.
  const contactsStored = Number(
    (await cluster.sql('select count(*)::int as n from sales.contacts where tenant_id = $1', [tenant.tenant_id])).rows[0].n,
  );
  const contactEvents = written.filter((e) => e.type === 'contact.created');
  const contactLost = lost.filter((e) => e.type === 'contact.created').length;
  // A duplicate is explained only by the killed webhooks replica: its first delivery reached the
  // receiver (2xx) before the kill, which came before the replica recorded it; the survivor then
  // delivered it again. Any other duplicate is a bug.
  const receipts = new Map<string, number[]>();
  for (const r of receiver.received.filter(mine)) receipts.set(r.id, [...(receipts.get(r.id) ?? []), r.receivedAt]);
  const webhooksKill = killedAt.get('webhooks');
  const duplicated = [...receipts].filter(([, at]) => at.length > 1);
  const unexplained = duplicated.filter(([, at]) => webhooksKill === undefined || (at[0] as number) > webhooksKill + 250);
  const contactDuplicates = contactEvents.reduce((n, e) => n + Math.max(0, (receipts.get(e.id)?.length ?? 0) - 1), 0);
  const ok =
    lost.length === 0 &&
    t.distinct >= written.length &&
    written.length > 0 &&
    contactEvents.length === contactsStored &&
    (exact ? t.duplicates === 0 : unexplained.length === 0);
  return {
    name: `phase ${label.toUpperCase()}: events written = distinct events delivered (${exact ? 'exactly once' : 'at least once, duplicates counted'}, 2 webhooks replicas)`,
    ok,
    detail:
      `${written.length} written (${[...byType].map(([type, n]) => `${type} ${n}`).join(', ')}), ${t.distinct} distinct delivered, ` +
      `${lost.length} missing, ${t.duplicates} duplicate deliveries of ${duplicated.length} events (${unexplained.length} not explained by the webhooks kill); ` +
      `contact.created: ${contactsStored} contacts stored, ${contactEvents.length} events written, ${contactEvents.length - contactLost} webhook-ids received, ${contactDuplicates} duplicates; ` +
      `outbox→NATS p50/p99/max ${percentile(publishMs, 50)}/${percentile(publishMs, 99)}/` +
      `${Math.max(0, ...publishMs)} ms, write→webhook p50/p99/max ${percentile(endToEndMs, 50)}/${percentile(endToEndMs, 99)}/${Math.max(0, ...endToEndMs)} ms`,
  };
}

/** Pids of the first replica of every kind: the processes that must live through phase B. */
function survivorPids(c: Cluster): Map<string, number | undefined> {
  return new Map(Object.values(c.pools).map((p) => [p.name, p.replicas[0]?.child.pid]));
}

/** The first replicas (never killed) are the same processes, still running: nothing needed a restart. */
function survivorsCarriedOn(c: Cluster, before: Map<string, number | undefined>): Verdict {
  const bad = Object.values(c.pools)
    .map((p) => p.replicas[0])
    .filter((r) => !r || r.child.exitCode !== null || r.child.signalCode !== null || before.get(r.name) !== r.child.pid)
    .map((r) => r?.name ?? '?');
  return {
    name: 'phase B: relays, consumers and every surviving process carried on without a restart',
    ok: bad.length === 0,
    detail: bad.length === 0 ? `same pids for replica 1 of ${[...before.keys()].join(', ')}` : `restarted or exited: ${bad.join(', ')}`,
  };
}

/**
 * SIGKILLs the NATS node that leads the run's events stream, measures how long the cluster takes
 * to elect another leader, starts the node again after SCALE_NATS_OUTAGE_S, and measures how long
 * it takes to be a current replica again.
 */
async function killNatsLeader(c: Cluster): Promise<void> {
  const nats = c.nats;
  if (!nats) {
    natsFault.error = 'no NATS cluster';
    return;
  }
  try {
    const before = await streamCluster(nats.nodes, c.stream);
    const index = nats.nodes.findIndex((n) => n.name === before?.leader);
    if (index < 0) throw new Error('no stream leader found');
    natsFault.node = before?.leader;
    log(`SIGKILL → NATS node ${natsFault.node} (leader of ${c.stream})`);
    natsFault.killedAt = Date.now();
    await nats.kill(index, 'SIGKILL');
    const others = nats.nodes.filter((_, i) => i !== index);
    const restartAt = natsFault.killedAt + natsOutageS * 1000;
    while (Date.now() < restartAt) {
      const now = await streamCluster(others, c.stream);
      if (natsFault.newLeaderAfterMs === undefined && now && now.leader !== natsFault.node)
        natsFault.newLeaderAfterMs = Date.now() - natsFault.killedAt;
      await new Promise((r) => setTimeout(r, 200));
    }
    await nats.restart(index);
    natsFault.restartedAt = Date.now();
    log(`NATS node ${natsFault.node} started again after ${natsFault.restartedAt - natsFault.killedAt} ms`);
    for (const until = Date.now() + 60_000; Date.now() < until; await new Promise((r) => setTimeout(r, 200))) {
      const now = await streamCluster(nats.nodes, c.stream);
      if (now?.replicas.find((r) => r.name === natsFault.node)?.current) {
        natsFault.currentAfterMs = Date.now() - natsFault.restartedAt;
        break;
      }
    }
  } catch (error) {
    natsFault.error = String(error);
  }
}

/**
 * Time to recover from the NATS stream leader's loss: the events written while the stream had no
 * leader (they wait in the outboxes), when the last of them was published, and when the last of
 * them reached the webhook receiver.
 */
async function natsRecovery(tenant: LoadTenant, label: string): Promise<Verdict> {
  const { killedAt, newLeaderAfterMs } = natsFault;
  const name = 'phase B: time to recover from the NATS leader loss (events written while the stream had no leader)';
  if (killedAt === undefined || newLeaderAfterMs === undefined) return { name, ok: false, detail: 'no leader change measured' };
  const leaderAt = killedAt + newLeaderAfterMs;
  const stranded = (await eventsWritten(tenant)).filter((e) => e.created_at.getTime() >= killedAt && e.created_at.getTime() <= leaderAt);
  const firstReceipt = new Map<string, number>();
  for (const r of receiver.received.filter((x) => x.path.endsWith(`/${label}`)))
    if (!firstReceipt.has(r.id)) firstReceipt.set(r.id, r.receivedAt);
  const published = stranded.map((e) => e.published_at?.getTime());
  const delivered = stranded.map((e) => firstReceipt.get(e.id));
  const ok = stranded.length > 0 && published.every((t) => t !== undefined) && delivered.every((t) => t !== undefined);
  const lastPublished = Math.max(...published.map((t) => t ?? Number.NaN));
  const lastDelivered = Math.max(...delivered.map((t) => t ?? Number.NaN));
  return {
    name,
    ok,
    detail:
      `${stranded.length} events written in the ${newLeaderAfterMs} ms without a leader; the last published ${lastPublished - killedAt} ms after the kill ` +
      `(${lastPublished - leaderAt} ms after the new leader), the last delivered ${lastDelivered - killedAt} ms after the kill`,
  };
}

function natsFaultVerdict(): Verdict {
  const { node, killedAt, restartedAt, newLeaderAfterMs, currentAfterMs, error } = natsFault;
  const ok = !error && restartedAt !== undefined && newLeaderAfterMs !== undefined && currentAfterMs !== undefined;
  return {
    name: 'phase B: NATS stream leader killed (SIGKILL) and restarted mid-run',
    ok,
    detail: error
      ? error
      : `node ${node} down ${restartedAt && killedAt ? restartedAt - killedAt : '?'} ms; new stream leader after ${newLeaderAfterMs ?? 'never'} ms; ` +
        `restarted node a current replica ${currentAfterMs ?? 'never'} ms after its start`,
  };
}

interface ProbeSample {
  kind: string;
  /** Sent and answered (or failed), epoch ms. */
  at: number;
  end: number;
  status: number;
}

/**
 * Calls each kind through the gateway balancer every SCALE_PROBE_MS during phase B, as a client
 * without retries would: a read of each service and a keyed contact create (a tenant of its own,
 * so the crud-mix counts are not touched). Reads that fail on a dead replica are retried by nginx
 * on the other one (`proxy_next_upstream error`); writes are not, so they show what a client
 * that does not retry would see.
 */
async function startProbe() {
  const tenant = await provisionTenant(target, 'scale probe', raisedLimits);
  const samples: ProbeSample[] = [];
  let running = true;
  const calls: { kind: string; method: string; path: string; body?: () => string }[] = [
    { kind: 'sales read', method: 'GET', path: '/v1/contacts?per_page=1' },
    { kind: 'catalog read', method: 'GET', path: '/v1/products?per_page=1' },
    { kind: 'documents read', method: 'GET', path: '/v1/document-categories?per_page=1' },
    { kind: 'webhooks read', method: 'GET', path: '/v1/webhooks?per_page=1' },
    {
      kind: 'sales write (no retry)',
      method: 'POST',
      path: '/v1/contacts',
      body: () => JSON.stringify({ name: `Probe ${crypto.randomUUID()}`, type: 'client' }),
    },
  ];
  const loop = async (c: (typeof calls)[number]) => {
    while (running) {
      const at = Date.now();
      let status = 0;
      try {
        const res = await fetch(`${cluster.gatewayUrl}${c.path}`, {
          method: c.method,
          headers: {
            'x-api-key': tenant.api_key,
            ...(c.body ? { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() } : {}),
          },
          body: c.body?.(),
          signal: AbortSignal.timeout(20_000),
        });
        status = res.status;
        await res.arrayBuffer();
      } catch {
        status = 0;
      }
      samples.push({ kind: c.kind, at, end: Date.now(), status });
      await new Promise((r) => setTimeout(r, Math.max(0, probeEveryMs - (Date.now() - at))));
    }
  };
  const loops = calls.map(loop);
  return {
    samples,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/**
 * Outage per kind as the probe saw it: failed calls (5xx or no answer) after the replica kills,
 * the span from the first failed call's sending to the last failed answer, and the time from the
 * kill of that kind's replica (for writes: the gateway's) to the last failed answer — after it
 * every call succeeded.
 */
function outages(samples: ProbeSample[]): Verdict {
  const kills = [...killedAt.values()];
  const firstKill = kills.length > 0 ? Math.min(...kills) : undefined;
  const parts: string[] = [];
  for (const kind of [...new Set(samples.map((s) => s.kind))]) {
    const own = samples.filter((s) => s.kind === kind);
    const failed = own.filter((s) => s.status === 0 || s.status >= 500);
    const service = kind.split(' ')[0] as ProcessName;
    const killAt = kind.includes('write') ? killedAt.get('gateway') : (killedAt.get(service) ?? firstKill);
    if (failed.length === 0) {
      parts.push(`${kind}: 0 of ${own.length} failed`);
      continue;
    }
    const first = (failed[0] as ProbeSample).at;
    const last = Math.max(...failed.map((s) => s.end));
    const statuses = [...new Set(failed.map((s) => s.status))].join('/');
    parts.push(
      `${kind}: ${failed.length} of ${own.length} failed (${statuses}), from its sending to the last failed answer ${last - first} ms, ` +
        `last failed answer ${killAt === undefined ? '?' : last - killAt} ms after the kill`,
    );
  }
  return {
    name: 'phase B: outages seen by a client without retries (probe every ' + `${probeEveryMs} ms through the gateway balancer)`,
    ok: samples.length > 0,
    detail: parts.join('; '),
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

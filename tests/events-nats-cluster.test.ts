import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureStream } from '@crm/events';
import { type NatsCluster, startNatsCluster, streamCluster } from '@crm/stack';
import { pollUntil, type Receiver, type Stack, startReceiver, startStack } from '@crm/testing';
import { connect, type NatsConnection } from 'nats';

// A three-node JetStream cluster of the test's own on loopback. The services connect with all
// three URLs and run the events stream with three replicas; the stream's leader is killed
// (SIGKILL) in the middle of the writes and started again.

let cluster: NatsCluster;
let nc: NatsConnection;
let stack: Stack;
let receiver: Receiver;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  cluster = await startNatsCluster({ dataDir: mkdtempSync(join(tmpdir(), 'crm-nats-cluster-')) });
  nc = await connect({ servers: cluster.nodes.map((n) => n.url) });
  stack = await startStack({ natsUrl: cluster.url, env: { NATS_STREAM_REPLICAS: '3', WEBHOOK_RETRY_SCHEDULE: '1,1,1' } });
  receiver = await startReceiver();
}, 180_000);

afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
  await nc?.close();
  await cluster?.stop();
}, 60_000);

test('an existing R1 stream is raised to three replicas on the cluster, and stays so', async () => {
  const stream = `CLUSTER_UPD_${Date.now().toString(36).toUpperCase()}`;
  const prefix = `${stream.toLowerCase()}.events`;
  const jsm = await nc.jetstreamManager();
  try {
    expect(await ensureStream(nc, stream, prefix, { replicas: 1 })).toEqual({ action: 'created' });
    expect((await jsm.streams.info(stream)).cluster?.replicas ?? []).toEqual([]);
    await nc.jetstream().publish(`${prefix}.contact.created`, new TextEncoder().encode('{"n":1}'));
    expect(await ensureStream(nc, stream, prefix, { replicas: 3 })).toEqual({ action: 'updated', changed: ['num_replicas'] });
    const info = await pollUntil(
      'the stream to have two current replicas',
      () => jsm.streams.info(stream),
      (i) => i.cluster?.replicas?.length === 2 && i.cluster.replicas.every((r) => r.current),
      { timeoutMs: 15_000, everyMs: 200, show: (i) => i.cluster },
    );
    expect(info.config.num_replicas).toBe(3);
    expect(info.cluster?.replicas?.map((r) => r.current)).toEqual([true, true]);
    expect(info.state.messages).toBe(1);
    expect(await ensureStream(nc, stream, prefix)).toEqual({ action: 'unchanged' });
  } finally {
    await jsm.streams.delete(stream).catch(() => {});
  }
}, 30_000);

test('the stream leader is killed and restarted during the writes: no event lost, every process carries on without a restart', async () => {
  const jsm = await nc.jetstreamManager();
  const info = await jsm.streams.info(stack.stream);
  expect(info.config.num_replicas).toBe(3);
  expect(info.cluster?.replicas?.length).toBe(2);

  const tenant = await stack.createTenant();
  const hook = await tenant.request('POST', '/v1/webhooks', { body: { url: receiver.url, events: ['contact.created'] } });
  expect(hook.status).toBe(201);
  receiver.trust(hook.body.data.secret);
  const pids = Object.fromEntries(Object.entries(stack.processes).map(([name, p]) => [name, p.child.pid]));

  const ids: number[] = [];
  const failures: string[] = [];
  let writing = true;
  const writer = async (w: number) => {
    for (let i = 0; writing; i++) {
      const res = await tenant.request('POST', '/v1/contacts', { body: { name: `Cluster ${w}-${i}`, type: 'client' } });
      if (res.status === 201) ids.push(res.body.data.id);
      else failures.push(`${res.status} ${res.text.slice(0, 200)}`);
    }
  };
  const writers = [0, 1].map(writer);
  await sleep(2000);

  const leaderName = (await streamCluster(cluster.nodes, stack.stream))?.leader;
  const victim = cluster.nodes.findIndex((n) => n.name === leaderName);
  expect(victim).toBeGreaterThanOrEqual(0);
  const killedAt = Date.now();
  await cluster.kill(victim, 'SIGKILL');
  const others = cluster.nodes.filter((_, i) => i !== victim);
  let newLeaderAfterMs = -1;
  for (const until = Date.now() + 20_000; Date.now() < until; await sleep(100)) {
    const state = await streamCluster(others, stack.stream);
    if (state && state.leader !== leaderName) {
      newLeaderAfterMs = Date.now() - killedAt;
      break;
    }
  }
  await sleep(Math.max(0, 5000 - (Date.now() - killedAt)));
  await cluster.restart(victim);
  const restartedAt = Date.now();
  let currentAfterMs = -1;
  for (const until = Date.now() + 30_000; Date.now() < until; await sleep(200)) {
    const state = await streamCluster(cluster.nodes, stack.stream);
    const replica = state?.replicas.find((r) => r.name === leaderName);
    if (state && state.leader !== leaderName && replica?.current) {
      currentAfterMs = Date.now() - restartedAt;
      break;
    }
  }
  await sleep(2000);
  writing = false;
  await Promise.all(writers);

  const wanted = new Set(ids);
  const delivered = () => new Set(receiver.received.filter((r) => r.body.type === 'contact.created').map((r) => r.body.data.id as number));
  const waitStarted = Date.now();
  const allDelivered = () => [...wanted].every((id) => delivered().has(id));
  try {
    await receiver.waitFor(allDelivered, 20_000).catch(async () => {
      await diagnose();
      await receiver.waitFor(allDelivered, 60_000);
    });
  } catch (error) {
    await diagnose();
    throw error;
  }
  console.log(`[nats-cluster] delivered ${Date.now() - waitStarted} ms after the writes stopped`);
  async function diagnose() {
    // Where the missing events are: the outbox, the stream, the consumer, the webhooks tables.
    const consumer = await jsm.consumers.info(stack.stream, 'webhooks').catch((e) => String(e));
    const q = async (text: string) => (await stack.sql(text, [tenant.tenantId])).rows;
    console.log('[nats-cluster] not delivered', {
      written: ids.length,
      delivered: delivered().size,
      stream: await streamCluster(cluster.nodes, stack.stream),
      consumer:
        typeof consumer === 'string'
          ? consumer
          : {
              pending: consumer.num_pending,
              ack_pending: consumer.num_ack_pending,
              redelivered: consumer.num_redelivered,
              cluster: consumer.cluster,
            },
      outbox: await q(
        "select count(*) filter (where published_at is null)::int as pending, count(*)::int as n from sales.outbox where tenant_id = $1 and type = 'contact.created'",
      ),
      events: await q("select count(*)::int as n from webhooks.events where tenant_id = $1 and type = 'contact.created'"),
      tasks: await q(
        `select status, attempts, count(*)::int as n, extract(epoch from min(next_attempt_at) - now())::int as due_in_min_s,
           extract(epoch from max(next_attempt_at) - now())::int as due_in_max_s
         from webhooks.delivery_tasks where tenant_id = $1 group by status, attempts`,
      ),
      attempts: await q('select status, count(*)::int as n from webhooks.delivery_attempts where tenant_id = $1 group by status'),
    });
  }
  const lagMs = Number(
    (
      await stack.sql(
        "select coalesce(max(extract(epoch from published_at - created_at) * 1000), 0)::int as ms from sales.outbox where tenant_id = $1 and type = 'contact.created'",
        [tenant.tenantId],
      )
    ).rows[0].ms,
  );
  console.log(
    `[nats-cluster] logs ${stack.logDir}; ${ids.length} contacts written; leader ${leaderName} down ${restartedAt - killedAt} ms; new leader after ${newLeaderAfterMs} ms; ` +
      `restarted node current after ${currentAfterMs} ms; slowest outbox publish ${lagMs} ms; ${receiver.received.length} deliveries`,
  );

  expect(failures).toEqual([]); // NATS trouble never fails a write: the events wait in the outbox
  expect(newLeaderAfterMs).toBeGreaterThanOrEqual(0);
  expect(currentAfterMs).toBeGreaterThanOrEqual(0);
  expect(ids.length).toBeGreaterThan(20);
  expect([...wanted].filter((id) => !delivered().has(id))).toEqual([]);
  expect(receiver.received.filter((r) => r.verifiedWith.length !== 1)).toEqual([]);
  const pending = await stack.sql('select count(*)::int as n from sales.outbox where published_at is null');
  expect(pending.rows[0].n).toBe(0);
  for (const [name, p] of Object.entries(stack.processes)) {
    expect(p.child.exitCode).toBeNull();
    expect(p.child.pid).toBe(pids[name] as number);
  }
}, 150_000);

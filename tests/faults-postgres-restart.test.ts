import { afterAll, beforeAll, expect, test } from 'bun:test';
import { canConnect } from '@crm/stack';
import { pollUntil, type Stack, send, startStack, type TestTenant } from '@crm/testing';
import { connect } from 'nats';
import { type OwnPostgres, startOwnPostgres } from './own-postgres.ts';

// A PostgreSQL of the test's own (initdb as the `postgres` OS user in a temporary directory, on a
// free port; never the shared local cluster), crashed (`pg_ctl stop -m immediate`) and started
// again under a steady write load through the gateway.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** How long PostgreSQL stays down. */
const OUTAGE_MS = 4000;
/** The gateway's upstream timeout in this stack: no answer may come near it. */
const UPSTREAM_TIMEOUT_MS = 15_000;
/** "Quickly": an answer during the outage takes at most this long. */
const QUICK_MS = 2000;

let postgres: OwnPostgres;
let stack: Stack;

beforeAll(async () => {
  postgres = await startOwnPostgres('crm-pg-restart-');
  stack = await startStack({ baseDb: postgres.url });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await postgres?.remove();
}, 60_000);

interface Answer {
  status: number;
  type?: string;
  id?: number;
  ms: number;
  /** When the request was sent, relative to the outage: before, during, after. */
  phase: 'before' | 'during' | 'after';
}

test('PostgreSQL crashes and comes back under a write load: quick 503s meanwhile, /readyz follows, no acknowledged write or event is lost, no process restarts', async () => {
  const tenant: TestTenant = await stack.createTenant();
  // A tenant with a budget of one write per minute spends it before the crash.
  const limited: TestTenant = await stack.createTenant({ limits: { write_per_minute: 1 } });
  const limitedWrite = () => limited.request('POST', '/v1/contacts', { body: { name: `Limited ${crypto.randomUUID()}`, type: 'client' } });
  expect((await limitedWrite()).status).toBe(201);
  expect((await limitedWrite()).status).toBe(429);
  const pids = Object.fromEntries(Object.entries(stack.processes).map(([name, p]) => [name, p.child.pid]));
  let phase: Answer['phase'] = 'before';
  let running = true;
  const answers: Answer[] = [];

  // Four writers, each creating contacts one after another with a fresh Idempotency-Key.
  const writer = async (w: number) => {
    for (let i = 0; running; i++) {
      const sentIn = phase;
      const started = performance.now();
      const res = await tenant.request('POST', '/v1/contacts', {
        body: { name: `Writer ${w} contact ${i}`, type: 'client' },
        headers: { 'idempotency-key': `pg-restart-${w}-${i}-${crypto.randomUUID()}` },
      });
      answers.push({
        status: res.status,
        type: res.body?.error?.type,
        id: res.body?.data?.id,
        ms: performance.now() - started,
        phase: sentIn,
      });
      if (res.status !== 201) await sleep(50);
    }
  };
  const readiness: { at: number; status: number; phase: Answer['phase'] }[] = [];
  const probe = async () => {
    while (running) {
      const res = await send(stack.processes.sales.url, 'GET', '/readyz').catch(() => ({ status: 0 }));
      readiness.push({ at: Date.now(), status: res.status, phase });
      await sleep(200);
    }
  };

  const writers = [0, 1, 2, 3].map(writer);
  const probing = probe();
  await sleep(2500);

  // The crash: no shutdown checkpoint, every connection cut, unlogged tables reset on recovery.
  phase = 'during';
  const stopping = Date.now();
  await postgres.crash();
  const downAt = Date.now();
  await sleep(OUTAGE_MS);
  // Crash recovery runs while the load goes on ("the database system is starting up").
  await postgres.start();
  const upAt = Date.now();
  phase = 'after';

  // /readyz of sales recovers by itself.
  let readyAfterMs = -1;
  while (Date.now() - upAt < 20_000) {
    if ((await send(stack.processes.sales.url, 'GET', '/readyz')).status === 200) {
      readyAfterMs = Date.now() - upAt;
      break;
    }
    await sleep(100);
  }
  await sleep(3000); // writes after the restart
  running = false;
  await Promise.all([...writers, probing]);

  const during = answers.filter((a) => a.phase === 'during');
  const unexpected = answers.filter((a) => a.status !== 201 && a.status !== 503);
  const refused = answers.filter((a) => a.status === 503);
  const maxDuringMs = Math.max(...during.map((a) => a.ms));
  console.log(
    `[pg-restart] stop took ${downAt - stopping} ms, down ${upAt - downAt} ms (incl. crash recovery); answers before/during/after: ${[
      'before',
      'during',
      'after',
    ]
      .map((p) => answers.filter((a) => a.phase === p).length)
      .join('/')}; 503s ${refused.length} (slowest ${Math.round(Math.max(0, ...refused.map((a) => a.ms)))} ms); ` +
      `slowest answer sent during the outage ${Math.round(maxDuringMs)} ms; sales ready ${readyAfterMs} ms after the restart`,
  );

  // Nothing but 201 and 503 service_unavailable, and the outage's answers came quickly.
  expect(unexpected.map((a) => `${a.status} ${a.type}`)).toEqual([]);
  expect(during.length).toBeGreaterThan(0);
  expect(during.filter((a) => a.status === 503).length).toBeGreaterThan(0);
  expect(refused.every((a) => a.type === 'service_unavailable')).toBe(true);
  expect(maxDuringMs).toBeLessThan(QUICK_MS);
  expect(QUICK_MS).toBeLessThan(UPSTREAM_TIMEOUT_MS);

  // /readyz said so during the outage and recovered after it.
  const whileDown = readiness.filter((r) => r.at > downAt + 500 && r.at < downAt + OUTAGE_MS);
  expect(whileDown.length).toBeGreaterThan(5);
  expect(whileDown.filter((r) => r.status !== 503)).toEqual([]);
  expect(readyAfterMs).toBeGreaterThanOrEqual(0);
  expect((await send(stack.gatewayOpsUrl, 'GET', '/readyz')).status).toBe(200);

  // Writes were accepted again after the restart, and every 201 is stored and listed by the API.
  const acknowledged = answers.filter((a) => a.status === 201).map((a) => a.id as number);
  expect(answers.some((a) => a.phase === 'after' && a.status === 201)).toBe(true);
  const listed = new Set<number>();
  for (let page = 1; ; page++) {
    const res = await tenant.request('GET', `/v1/contacts?per_page=100&page=${page}`);
    expect(res.status).toBe(200);
    for (const c of res.body.data) listed.add(c.id);
    if (res.body.data.length < 100) break;
  }
  expect(acknowledged.filter((id) => !listed.has(id))).toEqual([]);

  // The relay resumed without a process restart: every acknowledged contact's event reaches NATS.
  const nc = await connect({ servers: stack.natsUrl.split(',') });
  try {
    const jsm = await nc.jetstreamManager();
    const published = new Set<number>();
    let nextSeq = 1;
    /** The acknowledged contacts whose event is not on the stream yet; each call reads on from the last message read. */
    const unpublished = async () => {
      const { last_seq } = (await jsm.streams.info(stack.stream)).state;
      for (; nextSeq <= last_seq; nextSeq++) {
        const event = (await jsm.streams.getMessage(stack.stream, { seq: nextSeq })).json<{
          type: string;
          tenant_id: string;
          data: { id: number };
        }>();
        if (event.type === 'contact.created' && event.tenant_id === tenant.tenantId) published.add(event.data.id);
      }
      return acknowledged.filter((id) => !published.has(id));
    };
    await pollUntil("every acknowledged contact's event on the stream", unpublished, (ids) => ids.length === 0, {
      timeoutMs: 20_000,
      everyMs: 500,
    });
    expect(acknowledged.filter((id) => !published.has(id))).toEqual([]);
  } finally {
    await nc.close();
  }
  const pending = await stack.sql('select count(*)::int as n from sales.outbox where published_at is null');
  expect(pending.rows[0].n).toBe(0);

  // Each relay opened its LISTEN connection again (new rows wake it at once, not at the next poll);
  // the relay also runs its batches on that connection, so it is found by its name, not its last query.
  const listeners = await pollUntil(
    'the four relays to connect again',
    async () => {
      const { rows } = await stack.sql<{ application_name: string }>(
        "select application_name from pg_stat_activity where datname = current_database() and application_name like 'crm-outbox-relay:%'",
      );
      return rows.map((r) => r.application_name).sort();
    },
    (names) => names.length >= 4,
    { timeoutMs: 10_000, everyMs: 200 },
  );
  expect(listeners).toEqual(['catalog', 'documents', 'sales', 'webhooks'].map((s) => `crm-outbox-relay:${s}`));

  // Rate-limit buckets live in an UNLOGGED table, which crash recovery empties: the limited tenant's
  // budget is full again well within its minute (one window's budget, no more), as documented in
  // services/gateway/README.md.
  expect((await limitedWrite()).status).toBe(201);
  expect((await limitedWrite()).status).toBe(429);

  // Nobody was restarted: the same processes, still running.
  for (const [name, p] of Object.entries(stack.processes)) {
    expect(p.child.exitCode).toBeNull();
    expect(p.child.pid).toBe(pids[name] as number);
  }
  expect(await canConnect('127.0.0.1', postgres.port)).toBe(true);
}, 90_000);

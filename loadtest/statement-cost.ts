// `npx bun loadtest/statement-cost.ts`: PostgreSQL CPU per statement of the event path, planned on
// every call against planned once per connection. On a stack of its own (its migrations, one
// tenant with one webhook endpoint), one connection per case runs each statement N times (default
// 3000) inside one transaction (rolled back), alternating the two ways twice; the backend's CPU
// comes from /proc/<pid>/stat. Cases:
// - outbox: the outbox write with its NOTIFY (libs/events `WRITE_EVENTS`), unnamed against named;
// - store event: an event stored with its delivery tasks (webhooks `STORE_EVENT`), the same;
// - claim: the delivery claim as the worker sends it, `begin; set local …; <claim>; commit` in one
//   simple-protocol round trip, against the same with `execute <name>` of a statement PREPAREd
//   once (`queryWithSettings(…, { prepared: true })`); it claims nothing (no task is due).
import { QUEUE_SCAN_SETTING } from '@crm/db';
import { WRITE_EVENTS } from '@crm/events';
import { startStack } from '@crm/testing';
import pg from 'pg';
import { STORE_EVENT } from '../services/webhooks/src/ingest/event-store.ts';
import { claimStatement } from '../services/webhooks/src/worker/task-queue.ts';
import { processTicks } from './lib/cpu.ts';

const N = Number(process.env.N ?? 3000);
const log = (m: string) => console.log(`[statement-cost] ${m}`);

const stack = await startStack({ env: { LOG_LEVEL: 'warn' } });
try {
  const tenant = await stack.createTenant();
  // Loopback is allowed for the test stack's webhooks; nothing is delivered (no task becomes due in a rolled-back transaction).
  const hook = await tenant.request('POST', '/v1/webhooks', { body: { url: 'http://127.0.0.1:9/hook', events: ['contact.created'] } });
  if (hook.status !== 201) throw new Error(`webhook creation failed: ${hook.status} ${JSON.stringify(hook.body)}`);
  let n = 0;
  const id = () => `evt_cost_${process.pid}_${n++}`;
  const claim = claimStatement(32, 50_000);
  type Way = 'unnamed' | 'named';
  /** A statement with parameters, sent unnamed (planned each call) or under `name` (prepared once). */
  const parameterized = (text: string, name: string, values: () => unknown[]) => (way: Way) =>
    way === 'named' ? { name, text, values: values() } : { text, values: values() };
  const cases: { label: string; schema: string; query: (way: Way) => pg.QueryConfig; prepare?: string; ownTransactions?: boolean }[] = [
    {
      label: 'outbox',
      schema: 'sales',
      query: parameterized(WRITE_EVENTS.sql, 'cost_outbox', () => [[id()], [tenant.tenantId], ['contact.created'], ['{"id":1}']]),
    },
    {
      label: 'store event',
      schema: 'webhooks',
      query: parameterized(STORE_EVENT.sql, 'cost_store', () => [
        id(),
        tenant.tenantId,
        'contact.created',
        '{"id":1}',
        new Date().toISOString(),
        1e9 + n,
      ]),
    },
    {
      label: 'claim',
      schema: 'webhooks',
      query: (way) => ({ text: `begin; set local ${QUEUE_SCAN_SETTING}; ${way === 'named' ? 'execute cost_claim' : claim}; commit` }),
      prepare: `prepare cost_claim as ${claim}`,
      ownTransactions: true,
    },
  ];
  for (const c of cases) {
    for (const way of ['unnamed', 'named', 'unnamed', 'named'] as const satisfies readonly Way[]) {
      const client = new pg.Client({ connectionString: stack.env.DATABASE_URL, options: `-c search_path=${c.schema},public` });
      await client.connect();
      try {
        const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid as number;
        if (way === 'named' && c.prepare) await client.query(c.prepare);
        if (!c.ownTransactions) await client.query('begin');
        const run = (count: number) => {
          let chain = Promise.resolve();
          for (let i = 0; i < count; i++) chain = chain.then(async () => void (await client.query(c.query(way))));
          return chain;
        };
        await run(20);
        const before = processTicks(pid) as number;
        const started = performance.now();
        await run(N);
        const cpuUs = (((processTicks(pid) as number) - before) * 10_000) / N;
        const wallUs = ((performance.now() - started) * 1000) / N;
        if (!c.ownTransactions) await client.query('rollback');
        log(
          `${c.label.padEnd(12)} ${way === 'named' ? 'planned once ' : 'planned each '} ${Math.round(cpuUs)} µs of PostgreSQL CPU, ${Math.round(wallUs)} µs round trip`,
        );
      } finally {
        await client.end();
      }
    }
  }
} finally {
  await stack.stop();
}

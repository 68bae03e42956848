// Property-based fuzz of the input boundary (contract §19), driven by the OpenAPI document the
// gateway serves: for every operation, valid-shaped and hostile path, query and body input.
// Per request: no 5xx, the error envelope on every 4xx, the answers §19 states for its input
// classes, and for every refused write an unchanged database, outbox, sequence and bucket.
// Every violation is collected; the test then fails with a grouped summary and a JSON report.
// `npm test` runs a bounded, fixed-seed pass; `npm run fuzz` a long one (see tests/README.md).
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Stack, startStack, type TestTenant } from '@crm/testing';
import fc from 'fast-check';
import { uploadToContact } from './documents-fixtures.ts';
import { caseArbitrary } from './fuzz/cases.ts';
import { fuzzConfig, replayHint } from './fuzz/config.ts';
import { loadOperations, type Operation } from './fuzz/openapi.ts';
import { ResourcePool } from './fuzz/pool.ts';
import { FuzzReport } from './fuzz/report.ts';
import { type RunContext, runCase } from './fuzz/runner.ts';
import { createFuzzTenant, OWNER_EMAIL, seedResources, startReceiver } from './fuzz/seed.ts';
import { createSnapshotter, type Snapshotter } from './fuzz/snapshot.ts';
import { domainHints, type Hints } from './fuzz/values.ts';

const config = fuzzConfig();
let stack: Stack;
let tenant: TestTenant;
let receiver: ReturnType<typeof startReceiver>;
let snapshots: Snapshotter;
let operations: Operation[];
const pool = new ResourcePool();

beforeAll(async () => {
  console.error(`fuzz: seed ${config.seed}, ${config.runs} cases, ${config.timeLimitMs / 1000} s (${replayHint(config)})`);
  receiver = startReceiver();
  stack = await startStack({
    // Webhook work happens right away and never again later, so background writes settle fast
    // and cannot land inside the snapshot window of a later refused write.
    env: { WEBHOOK_POLL_MS: '50', WEBHOOK_RETRY_SCHEDULE: '86400', WEBHOOK_RETRY_JITTER: '0', WEBHOOK_TIMEOUT_MS: '2000' },
  });
  tenant = await createFuzzTenant(stack);
  await seedResources(tenant, pool, receiver.url);
  operations = await loadOperations(stack.gatewayUrl);
  snapshots = await createSnapshotter(stack);
  await snapshots.settle(10_000);
}, 180_000);

afterAll(async () => {
  snapshots?.close();
  receiver?.stop();
  await stack?.stop();
});

/** Reads go first and deletes last, so most cases find the seeded resources still there. */
function runOrder(ops: Operation[]): Operation[] {
  const rank = (op: Operation) => (op.method === 'GET' ? 0 : op.method === 'DELETE' ? 2 : 1);
  return [...ops].sort((a, b) => rank(a) - rank(b));
}

async function assertStackAlive(): Promise<void> {
  for (const name of Object.keys(stack.processes) as (keyof Stack['processes'])[]) {
    const live = await stack.call(name, 'GET', '/livez').catch(() => undefined);
    if (live?.status !== 200) throw new Error(`fuzz stopped: the ${name} process no longer answers /livez (logs: ${stack.logDir})`);
  }
}

async function fuzzOperations(ctx: RunContext, hints: Hints): Promise<void> {
  const ordered = runOrder(operations);
  const perOperation = Math.max(1, Math.ceil(config.runs / ordered.length));
  const end = Date.now() + config.timeLimitMs;
  // A dead process ends the run; kept aside rather than thrown through fast-check, whose
  // message would print the whole (possibly megabyte-sized) case.
  let fatal: unknown;
  for (const [index, op] of ordered.entries()) {
    // Each operation gets its share of the time left, so a slow one cannot starve the rest.
    const opEnd = Date.now() + (end - Date.now()) / (ordered.length - index);
    await fc.assert(
      fc.asyncProperty(caseArbitrary(op, hints), async (c) => {
        if (fatal !== undefined || Date.now() >= opEnd) return;
        await runCase(ctx, c).catch((error) => {
          fatal = error;
        });
      }),
      { numRuns: perOperation, seed: config.seed + index },
    );
    if (fatal !== undefined) throw fatal;
  }
}

test('the state snapshot sees what a successful write leaves (self-check of the yardstick)', async () => {
  const before = await snapshots.take();
  const contact = await tenant.request('POST', '/v1/contacts', { body: { name: 'Snapshot Check', type: 'client' } });
  expect(contact.status).toBe(201);
  const upload = await uploadToContact(tenant, contact.body.data.id, 'check.txt', new TextEncoder().encode('snapshot check\n'));
  expect(upload.status).toBe(201);
  const changed = snapshots.diff(before, await snapshots.take()).map((c) => c.what);
  expect(changed).toEqual(
    expect.arrayContaining(['table sales.contacts', 'table sales.outbox', 'table documents.documents', 'bucket objects']),
  );
  pool.add('contacts', contact.body.data);
  pool.add('documents', upload.body.data);
  await snapshots.settle();
});

test(
  'fuzz: every operation answers valid and hostile input without 5xx, with the envelope, leaving nothing behind when refused (contract §19)',
  async () => {
    const report = new FuzzReport(config.seed, config.runs);
    const ctx: RunContext = { gatewayUrl: stack.gatewayUrl, apiKey: tenant.apiKey, pool, snapshots, report, assertAlive: assertStackAlive };
    const hints = domainHints({ ownerEmail: OWNER_EMAIL, receiverUrl: receiver.url });
    const started = Date.now();
    let stopped: unknown;
    await fuzzOperations(ctx, hints).catch((error) => {
      stopped = error;
    });
    mkdirSync(stack.logDir, { recursive: true });
    const reportPath = process.env.FUZZ_REPORT ?? join(stack.logDir, 'fuzz-report.json');
    report.write(reportPath, {
      profile: config.profile,
      operations: operations.length,
      seconds: Math.round((Date.now() - started) / 1000),
      logs: stack.logDir,
    });
    const summary = report.summary(reportPath, replayHint(config));
    console.error(summary);
    if (stopped) throw new Error(`${String(stopped)}\n${summary}`);
    expect(report.totals.requests).toBeGreaterThan(operations.length);
    if (report.violations.length > 0)
      throw new Error(`fuzz found ${report.violations.length} violations (seed ${config.seed})\n${summary}`);
  },
  config.timeLimitMs + 120_000,
);

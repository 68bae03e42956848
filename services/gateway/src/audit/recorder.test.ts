import { afterAll, beforeAll, expect, test } from 'bun:test';
import { createServer } from 'node:net';
import { createDb } from '@crm/db';
import type { Logger } from '@crm/http';
import type { Kysely } from 'kysely';
import type { GatewayDatabase } from '../db/database.ts';
import { type AuditEntry, createAuditRecorder, entryBytes } from './recorder.ts';

// The recorder against a database that is not there (a loopback port nobody listens on: every
// insert fails at once with ECONNREFUSED). What it does when the database comes back is tested
// end to end in tests/faults-audit.test.ts.

let db: Kysely<GatewayDatabase>;

beforeAll(async () => {
  const port = await new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
  db = createDb<GatewayDatabase>({ url: `postgres://postgres@127.0.0.1:${port}/none`, schema: 'gateway', max: 2 }).db;
});

afterAll(async () => {
  await db.destroy();
});

interface Logged {
  at: number;
  msg: string;
  fields?: Record<string, unknown>;
}

function recordingLogger() {
  const logged: Logged[] = [];
  const push = (msg: string, fields?: Record<string, unknown>) => logged.push({ at: performance.now(), msg, fields });
  const logger: Logger = { debug() {}, info: push, warn: push, error: push };
  return { logger, logged, named: (msg: string) => logged.filter((l) => l.msg === msg) };
}

const entry = (i: number): AuditEntry => ({
  occurred_at: new Date(),
  request_id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  tenant_id: 'tenant',
  key_id: 'key_1',
  method: 'GET',
  path: `/v1/contacts/${String(i).padStart(6, '0')}`,
  query: null,
  status: 200,
  duration_ms: 1,
  client_ip: '127.0.0.1',
  user_agent: 'recorder-test/1',
  idempotency_key: null,
  replayed: false,
  error_type: null,
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('database down: failed writes are retried with back-off, not on every record or tick', async () => {
  const { logger, named } = recordingLogger();
  const recorder = createAuditRecorder(db, logger, { flushMs: 20, batchSize: 10, retryMaxMs: 160, shutdownMs: 0 });
  const started = performance.now();
  // A steady trickle of records (more than a batch every 20 ms) for 1.5 s.
  for (let i = 0; performance.now() - started < 1500; i++) {
    for (let j = 0; j < 15; j++) recorder.record(entry(i * 15 + j));
    await sleep(10);
  }
  const failures = named('audit write failed; will retry');
  // Pauses 20, 40, 80, then 160 ms: about 11 attempts in 1.5 s (a write per tick would be ~75).
  expect(failures.length).toBeGreaterThanOrEqual(5);
  expect(failures.length).toBeLessThanOrEqual(15);
  const gaps = failures.slice(1).map((f, i) => f.at - (failures[i] as Logged).at);
  expect(gaps.slice(-3).every((g) => g >= 140)).toBe(true);
  expect(failures.at(-1)?.fields?.retry_in_ms).toBe(160);
  // Nothing was dropped (the budget is large) and nothing was written.
  expect(recorder.pending()).toBeGreaterThan(1000);
  expect(named('audit buffer full; entries dropped')).toEqual([]);
  await recorder.stop();
  expect(named('audit entries lost at shutdown').at(-1)?.fields?.lost).toBe(recorder.pending());
});

test('database down: the buffer is bounded; entries beyond it are dropped, counted and logged, and record() never waits', async () => {
  const { logger, named } = recordingLogger();
  const budget = entryBytes(entry(0)) * 100;
  const recorder = createAuditRecorder(db, logger, { flushMs: 50, batchSize: 1000, maxBufferedBytes: budget, shutdownMs: 0 });
  const started = performance.now();
  for (let i = 0; i < 5000; i++) recorder.record(entry(i));
  const recordMs = performance.now() - started;
  expect(recordMs).toBeLessThan(500);
  expect(recorder.pending()).toBe(100);
  // The next write attempt reports the drops, once.
  for (let i = 0; i < 50 && named('audit buffer full; entries dropped').length === 0; i++) await sleep(20);
  const [report] = named('audit buffer full; entries dropped');
  expect(report?.fields).toMatchObject({ dropped: 4900, buffered: 100, max_bytes: budget });
  // The metric counts them too.
  const { HttpMetrics } = await import('@crm/http');
  expect(new HttpMetrics('gateway').render()).toMatch(/audit_entries_dropped_total\{service="gateway"\} [1-9]\d*/);
  // More records while full: dropped again, reported again at the next attempt.
  for (let i = 0; i < 10; i++) recorder.record(entry(i));
  await recorder.stop();
  expect(named('audit buffer full; entries dropped').at(-1)?.fields?.dropped).toBe(10);
  expect(named('audit entries lost at shutdown').at(-1)?.fields?.lost).toBe(100);
});

test('stop() keeps retrying for shutdownMs, then says how many entries it could not write', async () => {
  const { logger, named } = recordingLogger();
  const recorder = createAuditRecorder(db, logger, { flushMs: 60_000, batchSize: 500, shutdownMs: 1200 });
  for (let i = 0; i < 7; i++) recorder.record(entry(i));
  await sleep(50); // the first (immediate) write has failed
  const started = performance.now();
  await recorder.stop();
  const took = performance.now() - started;
  expect(took).toBeGreaterThanOrEqual(1100);
  expect(took).toBeLessThan(3000);
  // Retries at 0, 200, 600 and 1200 ms (pauses doubling, capped by the deadline).
  expect(named('audit write failed; will retry').length).toBeGreaterThanOrEqual(4);
  expect(named('audit entries lost at shutdown').at(-1)?.fields?.lost).toBe(7);
});

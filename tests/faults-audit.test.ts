import { afterAll, beforeAll, expect, test } from 'bun:test';
import { type ApiResponse, type Stack, send, startStack, type TestTenant } from '@crm/testing';
import { type OwnPostgres, startOwnPostgres } from './own-postgres.ts';

// Audit records through a PostgreSQL crash (issue 16, contract §9): a PostgreSQL of the test's
// own is crashed (`pg_ctl stop -m immediate`) while clients keep calling the gateway, and started
// again. Every request answered before, during and after the outage — 2xx, 4xx or the outage's
// 503s — must have its audit record afterwards: the gateway keeps the batches the database did
// not take in memory and retries them with back-off (services/gateway/src/audit/recorder.ts).

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** How long PostgreSQL stays down. */
const OUTAGE_MS = 5000;

let postgres: OwnPostgres;
let stack: Stack;

beforeAll(async () => {
  postgres = await startOwnPostgres('crm-pg-audit-');
  stack = await startStack({ baseDb: postgres.url });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await postgres?.remove();
}, 60_000);

interface Answered {
  requestId: string;
  method: string;
  path: string;
  status: number;
  phase: 'before' | 'during' | 'after';
}

test('PostgreSQL crashes and comes back: every request answered meanwhile has its audit record, listed by GET /v1/audit-logs', async () => {
  const tenant: TestTenant = await stack.createTenant();
  const tag = crypto.randomUUID().slice(0, 8);
  let phase: Answered['phase'] = 'before';
  let running = true;
  const answered: Answered[] = [];

  /** Three clients: reads of unknown contacts (404, or 503 while the database is down), keyed creates, and now and then a keyless call (401). */
  const client = async (c: number) => {
    for (let i = 0; running; i++) {
      const requestId = crypto.randomUUID();
      const sentIn = phase;
      const kind = (c + i) % 10 === 0 ? 'keyless' : i % 3 === 0 ? 'create' : 'read';
      const path = kind === 'create' ? '/v1/contacts' : `/v1/contacts/fa-${tag}-${c}-${i}`;
      const method = kind === 'create' ? 'POST' : 'GET';
      const headers: Record<string, string> = { 'x-request-id': requestId };
      const res =
        kind === 'keyless'
          ? await send(stack.gatewayUrl, method, path, { headers })
          : await tenant.request(method, path, {
              headers: kind === 'create' ? { ...headers, 'idempotency-key': requestId } : headers,
              body: kind === 'create' ? { name: `Audited ${tag} ${c}-${i}`, type: 'client' } : undefined,
            });
      answered.push({ requestId, method, path, status: res.status, phase: sentIn });
      await sleep(40);
    }
  };

  const clients = [0, 1, 2].map(client);
  await sleep(1500);
  phase = 'during';
  await postgres.crash();
  const downAt = Date.now();
  await sleep(OUTAGE_MS);
  await postgres.start();
  const upAt = Date.now();
  phase = 'after';
  await sleep(1500);
  running = false;
  await Promise.all(clients);
  const answeredAt = Date.now();

  const during = answered.filter((a) => a.phase === 'during');
  expect(during.length).toBeGreaterThan(20);
  // The outage was real: requests sent during it were refused for it.
  expect(during.filter((a) => a.status === 503).length).toBeGreaterThan(10);

  // Every answered request's record arrives (the retry back-off is at most 5 s).
  const ids = answered.map((a) => a.requestId);
  let rows: { request_id: string; status: number; method: string; path: string; tenant_id: string | null }[] = [];
  for (const until = Date.now() + 30_000; Date.now() < until; await sleep(200)) {
    rows = (
      await stack.sql('select request_id, status, method, path, tenant_id from gateway.audit_logs where request_id = any($1::text[])', [
        ids,
      ])
    ).rows;
    if (new Set(rows.map((r) => r.request_id)).size === ids.length) break;
  }
  const allVisibleMs = Date.now() - answeredAt;
  const byId = new Map<string, typeof rows>();
  for (const r of rows) byId.set(r.request_id, [...(byId.get(r.request_id) ?? []), r]);
  const missing = answered.filter((a) => !byId.has(a.requestId));
  const duplicates = [...byId.values()].filter((list) => list.length > 1).length;
  console.log(
    `[faults-audit] down ${upAt - downAt} ms; requests before/during/after ${['before', 'during', 'after']
      .map((p) => answered.filter((a) => a.phase === p).length)
      .join('/')}; statuses during ${[...new Set(during.map((a) => a.status))].sort().join(',')}; ` +
      `every record stored ${allVisibleMs} ms after the last answer (${answeredAt - upAt} ms after the restart); ${missing.length} missing, ${duplicates} duplicated`,
  );
  expect(missing.map((a) => `${a.phase} ${a.method} ${a.path} ${a.status}`)).toEqual([]);
  // Each record says what the client got.
  for (const a of answered) {
    const [row] = byId.get(a.requestId) ?? [];
    expect({ status: row?.status, method: row?.method, path: row?.path }).toEqual({ status: a.status, method: a.method, path: a.path });
  }

  // The tenant's records are listed by the API: every read of the test whose record names the tenant.
  const listed = new Set<string>();
  let url: string | null = `/v1/audit-logs?per_page=100&path=${encodeURIComponent(`/v1/contacts/fa-${tag}-*`)}`;
  while (url) {
    const res: ApiResponse = await tenant.request('GET', url);
    expect(res.status).toBe(200);
    for (const r of res.body.data) listed.add(r.request_id);
    url = res.body.pagination.next_cursor
      ? `/v1/audit-logs?per_page=100&path=${encodeURIComponent(`/v1/contacts/fa-${tag}-*`)}&cursor=${res.body.pagination.next_cursor}`
      : null;
  }
  const tenantReads = rows.filter((r) => r.tenant_id === tenant.tenantId && r.path.startsWith(`/v1/contacts/fa-${tag}-`));
  expect(tenantReads.some((r) => r.status === 503)).toBe(true);
  expect(tenantReads.filter((r) => !listed.has(r.request_id)).map((r) => r.request_id)).toEqual([]);
}, 120_000);

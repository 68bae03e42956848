import { afterAll, beforeAll, expect, test } from 'bun:test';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canConnect, freePort } from '@crm/stack';
import { type Receiver, type Stack, startReceiver, startStack } from '@crm/testing';

// A NATS server of the test's own, stopped and started again while contacts are being written.
let stack: Stack;
let receiver: Receiver;
let nats: ChildProcess;
let natsPort: number;
let natsDir: string;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function startNats() {
  nats = spawn('/usr/sbin/nats-server', ['-a', '127.0.0.1', '-p', String(natsPort), '-js', '-sd', natsDir], { stdio: 'ignore' });
  while (!(await canConnect('127.0.0.1', natsPort))) await sleep(50);
}

async function stopNats() {
  const exited = new Promise((r) => nats.once('exit', r));
  nats.kill('SIGTERM');
  await exited;
}

beforeAll(async () => {
  natsPort = await freePort();
  natsDir = mkdtempSync(join(tmpdir(), 'crm-nats-webhooks-'));
  await startNats();
  stack = await startStack({ natsUrl: `nats://127.0.0.1:${natsPort}`, env: { WEBHOOK_RETRY_SCHEDULE: '1,1,1' } });
  receiver = await startReceiver();
}, 180_000);

afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
  nats?.kill('SIGTERM');
  rmSync(natsDir, { recursive: true, force: true });
}, 60_000);

test('a NATS restart in the middle of the writes loses no webhook: every contact.created arrives once, verified', async () => {
  const tenant = await stack.createTenant();
  const hook = await tenant.request('POST', '/v1/webhooks', { body: { url: receiver.url, events: ['contact.created'] } });
  expect(hook.status).toBe(201);
  receiver.trust(hook.body.data.secret);

  const ids: number[] = [];
  const write = async (n: number, label: string) => {
    for (let i = 0; i < n; i++) {
      const res = await tenant.request('POST', '/v1/contacts', { body: { name: `${label} ${i}`, type: 'client' } });
      expect(res.status).toBe(201);
      ids.push(res.body.data.id);
    }
  };
  await write(60, 'Before');
  await stopNats();
  await write(60, 'During'); // accepted while NATS is down: the events wait in the outbox
  await startNats();
  await write(60, 'After');

  const wanted = new Set(ids);
  const hits = () => receiver.received.filter((r) => r.body.type === 'contact.created' && wanted.has(r.body.data?.id));
  await receiver.waitFor(() => new Set(hits().map((h) => h.body.data.id)).size === ids.length, 60_000);
  await sleep(1500); // a late duplicate would arrive by now
  const delivered = hits();
  expect(new Set(delivered.map((h) => h.body.data.id)).size).toBe(180);
  expect(delivered.length).toBe(180);
  expect(new Set(delivered.map((h) => String(h.headers['webhook-id']))).size).toBe(180);
  expect(delivered.filter((h) => h.verifiedWith.length !== 1)).toEqual([]);
}, 150_000);

import { afterAll, beforeAll, expect, test } from 'bun:test';
import { type Stack, startStack } from '@crm/testing';

// The same code runs under Deno (from the npm package `deno`): the gateway and every service
// are started with `deno run`, and an authenticated request goes through the gateway to each.
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ runtime: 'deno' });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
}, 60_000);

test('gateway and all four services answer under Deno', async () => {
  const tenant = await stack.createTenant({ users: [{ email: 'deno@example.test', name: 'Dee No' }] });
  const probes: [string, string][] = [
    ['sales', '/v1/users'],
    ['catalog', '/v1/product-categories'],
    ['documents', '/v1/document-categories'],
    ['webhooks', '/v1/webhooks/event-types'],
  ];
  for (const [service, path] of probes) {
    const res = await tenant.request('GET', path);
    expect({ service, status: res.status }).toEqual({ service, status: 200 });
    expect(res.body.data).toBeDefined();
  }
  const health = await tenant.request('GET', '/v1/health');
  expect(health.body.data.services).toEqual({ gateway: 'up', sales: 'up', catalog: 'up', documents: 'up', webhooks: 'up' });
  const version = await stack.call('gateway', 'GET', '/livez');
  expect(version.status).toBe(200);
});

test('the processes really are Deno', async () => {
  const { readFileSync } = await import('node:fs');
  for (const proc of Object.values(stack.processes)) {
    const cmdline = readFileSync(`/proc/${proc.child.pid}/cmdline`, 'utf8');
    expect(cmdline).toContain('deno');
  }
});

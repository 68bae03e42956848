import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type Stack, startStack, type TestTenant } from '@crm/testing';
import { type Receiver, startReceiver } from '../services/webhooks/src/testing/receiver.ts';

// A stack of its own with WEBHOOK_ALLOWED_NETS empty: loopback is refused like any private range.
let stack: Stack;
let tenant: TestTenant;
let receiver: Receiver;

beforeAll(async () => {
  stack = await startStack({ env: { WEBHOOK_ALLOWED_NETS: '' } });
  tenant = await stack.createTenant();
  receiver = await startReceiver();
}, 180_000);

afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
}, 60_000);

describe('SSRF guard', () => {
  test('targets resolving to private, loopback, link-local or metadata addresses are refused at registration', async () => {
    const targets = [
      receiver.url,
      `http://localhost:${receiver.port}/hook`,
      'http://169.254.169.254/latest/meta-data/',
      'http://10.1.2.3/hook',
      'https://192.168.1.20/hook',
      'http://[::1]:8080/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://0.0.0.0:80/',
    ];
    for (const url of targets) {
      const res = await tenant.request('POST', '/v1/webhooks', { body: { url } });
      expect(res.status).toBe(422);
      expect(res.body.error.details).toEqual([{ field: 'url', message: expect.stringMatching(/loopback|private|link-local|unspecified/) }]);
    }
    expect((await tenant.request('GET', '/v1/webhooks')).body.pagination.total).toBe(0);
  }, 30_000);

  test('an update to a refused target is refused too', async () => {
    await stack.sql(
      `insert into webhooks.endpoints (tenant_id, url, secret) values ($1, 'https://203.0.113.10/hook', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')`,
      [tenant.tenantId],
    );
    const { rows } = await stack.sql('select id from webhooks.endpoints where tenant_id = $1', [tenant.tenantId]);
    const res = await tenant.request('PUT', `/v1/webhooks/${rows[0].id}`, { body: { url: 'http://169.254.169.254/' } });
    expect(res.status).toBe(422);
    expect(res.body.error.details[0].field).toBe('url');
    await stack.sql('delete from webhooks.endpoints where id = $1', [rows[0].id]);
  }, 30_000);

  test('the address is checked again at connect time (a name that now resolves to loopback gets nothing)', async () => {
    // As if `localhost` had resolved to a public address at registration and was rebound since.
    const { rows } = await stack.sql(
      `insert into webhooks.endpoints (tenant_id, url, secret) values ($1, $2, 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw') returning id`,
      [tenant.tenantId, `http://localhost:${receiver.port}/rebound`],
    );
    const id = rows[0].id;
    expect((await tenant.request('POST', `/v1/webhooks/${id}/test`)).status).toBe(202);
    let log: any[] = [];
    for (let i = 0; i < 100 && log.length === 0; i++) {
      log = (await tenant.request('GET', `/v1/webhooks/${id}/deliveries`)).body.data;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(log[0]).toMatchObject({ attempt: 1, status: 'pending', status_code: null });
    expect(log[0].error).toMatch(/^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address/);
    expect(receiver.received).toHaveLength(0);
  }, 30_000);
});

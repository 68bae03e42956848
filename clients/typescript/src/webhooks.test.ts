import { describe, expect, test } from 'bun:test';
import { Webhook } from 'standardwebhooks';
import { WebhookVerificationError } from './errors.ts';
import { verifyWebhook } from './webhooks.ts';

// Cross-checked against `standardwebhooks`, the reference implementation of the specification.
const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const body = JSON.stringify({ id: 'evt_1', type: 'contact.created', timestamp: '2026-11-23T10:00:00.000Z', data: { id: 7 } });

function signed(payload = body, at = new Date(), key = secret, id = 'evt_1') {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(key).sign(id, at, payload),
  };
}

const rejects = (promise: Promise<unknown>) => expect(promise).rejects.toBeInstanceOf(WebhookVerificationError);

describe('verifyWebhook', () => {
  test('accepts the published test vector', async () => {
    const headers = {
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    };
    expect(await verifyWebhook('{"test": 2432232314}', headers, secret, { now: 1614265330_000 })).toEqual({ test: 2432232314 } as any);
  });

  test('accepts what standardwebhooks signs, as text or bytes, with Fetch or Node headers', async () => {
    const headers = signed();
    expect((await verifyWebhook(body, headers, secret)).type).toBe('contact.created');
    expect((await verifyWebhook(new TextEncoder().encode(body), new Headers(headers), secret)).data).toEqual({ id: 7 });
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  test('several signatures (a rotated secret) and several secrets: any match is enough', async () => {
    const other = `whsec_${btoa('another secret of 32 bytes......')}`;
    const at = new Date();
    const both = { ...signed(body, at), 'webhook-signature': `v1,bm9wZQ== ${signed(body, at, other)['webhook-signature']}` };
    expect((await verifyWebhook(body, both, other)).id).toBe('evt_1');
    expect((await verifyWebhook(body, signed(), [other, secret])).id).toBe('evt_1');
  });

  test('rejects a tampered body, a wrong secret, a changed id and an unknown version', async () => {
    const headers = signed();
    await rejects(verifyWebhook(body.replace('"id":7', '"id":8'), headers, secret));
    await rejects(verifyWebhook(body, headers, `whsec_${btoa('a wrong secret of thirty-two b..')}`));
    await rejects(verifyWebhook(body, { ...headers, 'webhook-id': 'evt_2' }, secret));
    await rejects(verifyWebhook(body, { ...headers, 'webhook-signature': headers['webhook-signature'].replace('v1,', 'v2,') }, secret));
  });

  test('rejects a timestamp outside the tolerance, either way, and missing headers', async () => {
    const old = signed(body, new Date(Date.now() - 301_000));
    await rejects(verifyWebhook(body, old, secret));
    expect((await verifyWebhook(body, old, secret, { toleranceSeconds: 600 })).id).toBe('evt_1');
    await rejects(verifyWebhook(body, signed(body, new Date(Date.now() + 301_000)), secret));
    const { 'webhook-signature': _, ...unsigned } = signed();
    await rejects(verifyWebhook(body, unsigned, secret));
    await rejects(verifyWebhook(body, { ...signed(), 'webhook-timestamp': 'yesterday' }, secret));
  });
});

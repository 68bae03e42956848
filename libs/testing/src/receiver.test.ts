// The local webhook receiver of the tests and load tests: it verifies each delivery the way a
// customer would, and its waitFor is the shared poll loop, so a wait that runs out names what
// arrived.
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { newEndpointSecret, signatureHeader } from '../../../services/webhooks/src/signing/signature.ts';
import { type Receiver, startReceiver } from './receiver.ts';

const secret = newEndpointSecret();
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  receiver.trust(secret);
});
afterAll(() => receiver.close());

/** POSTs one event to the receiver, signed with `key` by the webhooks service's own signer. */
async function deliver(type: string, key: string) {
  const id = `evt_${crypto.randomUUID()}`;
  const timestamp = Math.floor(Date.now() / 1000);
  const body = JSON.stringify({ id, type, timestamp: new Date().toISOString(), data: {} });
  const res = await fetch(`${receiver.url}/hook`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signatureHeader([key], id, timestamp, body),
    },
    body,
  });
  expect(res.status).toBe(200);
  await res.text();
}

test('waitFor resolves once the predicate holds, with each delivery checked against the trusted secrets', async () => {
  const waiting = receiver.waitFor((all) => all.some((r) => r.body.type === 'contact.updated'), 5_000);
  await deliver('contact.created', secret);
  await deliver('contact.updated', newEndpointSecret());
  const all = await waiting;
  expect(all.map((r) => r.body.type)).toEqual(['contact.created', 'contact.updated']);
  expect(all.map((r) => r.verifiedWith)).toEqual([[secret], []]);
});

test('waitFor that runs out names what was awaited and what arrived', async () => {
  const started = Date.now();
  await expect(receiver.waitFor((all) => all.length > 5, 300)).rejects.toThrow(
    'receiver: the webhooks awaited: still "2 received: contact.created, contact.updated" after 300 ms',
  );
  expect(Date.now() - started).toBeGreaterThanOrEqual(300);
});

import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { EventEnvelope } from '@crm/contracts';
import { connect, type NatsConnection } from 'nats';
import { PoisonMessageError, startConsumer, TransientError } from './consumer.ts';
import type { Logger } from './logger.ts';
import { ensureStream } from './nats.ts';

// Runs against the real NATS server (NATS_URL or the local default) on a stream of its own.
const id = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const stream = `CONSUMER_TEST_${id.toUpperCase()}`;
const prefix = `consumertest${id}.events`;
const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };
let nc: NatsConnection;

beforeAll(async () => {
  nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222' });
  await ensureStream(nc, stream, prefix);
});

afterAll(async () => {
  await (await nc.jetstreamManager()).streams.delete(stream).catch(() => {});
  await nc.close();
});

const envelope = (n: number): EventEnvelope => ({
  id: `evt_${id}_${n}`,
  type: 'contact.created',
  tenant_id: 't',
  occurred_at: new Date().toISOString(),
  data: { n },
});
const until = async (done: () => boolean, ms = 10_000) => {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
};

test('acks handled events, redelivers after a TransientError, terminates poison and non-JSON messages, keeps going', async () => {
  const js = nc.jetstream();
  const seen: number[] = [];
  const attempts = new Map<number, number>();
  const consumer = startConsumer({
    nc,
    stream,
    subjectPrefix: prefix,
    durable: `test-${id}`,
    logger: quiet,
    async handle(event) {
      const n = (event.data as { n: number }).n;
      attempts.set(n, (attempts.get(n) ?? 0) + 1);
      if (n === 2 && attempts.get(n) === 1) throw new TransientError('dependency down', 200);
      if (n === 3) throw new PoisonMessageError('cannot ever be handled');
      seen.push(n);
    },
  });
  await js.publish(`${prefix}.contact.created`, new TextEncoder().encode(JSON.stringify(envelope(1))));
  await js.publish(`${prefix}.contact.created`, new TextEncoder().encode('not json at all'));
  for (const n of [2, 3, 4]) await js.publish(`${prefix}.contact.created`, new TextEncoder().encode(JSON.stringify(envelope(n))));
  await until(() => seen.includes(1) && seen.includes(2) && seen.includes(4));
  await new Promise((r) => setTimeout(r, 500)); // a terminated message would be redelivered by now if it were nak'ed
  await consumer.stop();

  expect([...seen].sort()).toEqual([1, 2, 4]);
  expect(attempts.get(2)).toBe(2); // nak'ed once, then handled
  expect(attempts.get(3)).toBe(1); // terminated, never redelivered
  const info = await (await nc.jetstreamManager()).consumers.info(stream, `test-${id}`);
  expect(info.num_ack_pending).toBe(0);
  expect(info.num_pending).toBe(0);
});

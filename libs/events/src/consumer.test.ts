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

test('batch mode: events received while a batch is handled form the next batch, acked after it; a failing batch falls back to one by one', async () => {
  const js = nc.jetstream();
  const durable = `batch-${id}`;
  const batches: number[][] = [];
  const single: number[] = [];
  let calls = 0;
  let gate: Promise<void> | undefined;
  let open: () => void = () => {};
  const close = () => {
    gate = new Promise<void>((r) => {
      open = r;
    });
  };
  const consumer = startConsumer({
    nc,
    stream,
    subjectPrefix: prefix,
    durable,
    filter: 'batch.>',
    logger: quiet,
    concurrency: 1,
    async handleBatch(items) {
      calls++;
      const ns = items.map((i) => (i.event.data as { n: number }).n);
      await gate;
      if (ns.includes(13)) throw new Error('one of these cannot be stored together');
      batches.push(ns);
    },
    async handle(event) {
      const n = (event.data as { n: number }).n;
      if (n === 13) throw new PoisonMessageError('never');
      single.push(n);
    },
  });
  const publish = (n: number) => js.publish(`${prefix}.batch.created`, new TextEncoder().encode(JSON.stringify(envelope(n))));
  const info = async () => (await nc.jetstreamManager()).consumers.info(stream, durable);

  // Event 100 is being handled (held); 101–105 arrive meanwhile and go together once it is done.
  close();
  await publish(100);
  await until(() => calls === 1);
  for (let n = 101; n <= 105; n++) await publish(n);
  await new Promise((r) => setTimeout(r, 300));
  expect((await info()).num_ack_pending).toBe(6); // nothing acked before its batch is done
  open();
  await until(() => batches.length === 2);
  expect(batches).toEqual([[100], [101, 102, 103, 104, 105]]);

  // A batch holding an event that fails: its other events are handled one by one, the poison one terminated.
  close();
  await publish(200);
  await until(() => calls === 3);
  for (const n of [201, 13, 202]) await publish(n);
  await new Promise((r) => setTimeout(r, 300));
  open();
  await until(() => single.length === 2);
  await new Promise((r) => setTimeout(r, 300)); // a terminated message would be redelivered by now if it were nak'ed
  await consumer.stop();

  expect(batches).toEqual([[100], [101, 102, 103, 104, 105], [200]]);
  expect(calls).toBe(4);
  expect(single).toEqual([201, 202]);
  const after = await info();
  expect(after.num_ack_pending).toBe(0);
  expect(after.num_pending).toBe(0);
});

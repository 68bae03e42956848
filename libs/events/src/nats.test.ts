import { afterAll, beforeAll, expect, test } from 'bun:test';
import { AckPolicy, connect, DeliverPolicy, type NatsConnection, nanos } from 'nats';
import { durableConfig, ensureConsumer } from './consumer.ts';
import type { Logger } from './logger.ts';
import { ensureStream, eventsStreamConfig, serverList } from './nats.ts';

// Runs against the real NATS server (NATS_URL or the local default) on streams of its own.
const id = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const warnings: string[] = [];
const logger: Logger = {
  debug() {},
  info() {},
  warn: (msg) => void warnings.push(msg),
  error: (msg) => void warnings.push(msg),
};
let nc: NatsConnection;
const streams: string[] = [];
/** A stream of the test's own, with its own subject prefix. */
const streamName = (label: string) => {
  const name = `NATS_TEST_${label}_${id.toUpperCase()}`;
  streams.push(name);
  return name;
};
const prefixOf = (stream: string) => `${stream.toLowerCase()}.events`;

beforeAll(async () => {
  nc = await connect({ servers: serverList(process.env.NATS_URL ?? 'nats://127.0.0.1:4222') });
});

afterAll(async () => {
  const jsm = await nc.jetstreamManager();
  for (const s of streams) await jsm.streams.delete(s).catch(() => {});
  await nc.close();
});

test('serverList splits a comma-separated cluster list', () => {
  expect(serverList('nats://a:1, nats://b:2,nats://c:3')).toEqual(['nats://a:1', 'nats://b:2', 'nats://c:3']);
  expect(serverList(['nats://a:1'])).toEqual(['nats://a:1']);
});

test('the events stream is created when missing and updated when an existing one differs; a second call changes nothing', async () => {
  const jsm = await nc.jetstreamManager();
  const stream = streamName('UPD');
  const prefix = prefixOf(stream);
  expect(await ensureStream(nc, stream, prefix, { replicas: 1, logger })).toEqual({ action: 'created' });
  expect((await jsm.streams.info(stream)).config).toMatchObject(eventsStreamConfig(stream, prefix, 1));

  // An older deployment's stream: other subjects, a one-hour max age and a two-minute duplicate window.
  await jsm.streams.update(stream, { subjects: [`${prefix}.contact.*`], max_age: nanos(3_600_000), duplicate_window: nanos(120_000) });
  const result = await ensureStream(nc, stream, prefix, { replicas: 1, logger });
  expect(result).toEqual({ action: 'updated', changed: ['subjects', 'max_age', 'duplicate_window'] });
  const config = (await jsm.streams.info(stream)).config;
  expect(config.subjects).toEqual([`${prefix}.>`]);
  expect(config.max_age).toBe(7 * 24 * 3600 * 1e9);
  expect(config.duplicate_window).toBe(10 * 60 * 1e9);
  expect(warnings).toContain('events stream configuration updated');

  expect(await ensureStream(nc, stream, prefix, { replicas: 1, logger })).toEqual({ action: 'unchanged' });
  // Without a replica count it keeps the one this process asked for before (never back to a default).
  expect(await ensureStream(nc, stream, prefix)).toEqual({ action: 'unchanged' });
});

test('a stream whose retention cannot change in place is used as it is, its messages kept, and the mismatch logged', async () => {
  const jsm = await nc.jetstreamManager();
  const stream = streamName('WQ');
  const prefix = prefixOf(stream);
  await jsm.streams.add({ ...eventsStreamConfig(stream, prefix, 1), retention: 'interest' as never });
  await nc.jetstream().publish(`${prefix}.contact.created`, new TextEncoder().encode('{}'));
  warnings.length = 0;
  expect(await ensureStream(nc, stream, prefix, { replicas: 1, logger })).toEqual({ action: 'unchanged' });
  expect(warnings).toContain('events stream settings that cannot be changed in place differ; using the stream as it is');
  expect((await jsm.streams.info(stream)).config.retention).toBe('interest' as never);
});

test('a durable consumer whose settings differ is updated in place, keeping its position', async () => {
  const jsm = await nc.jetstreamManager();
  const stream = streamName('CONS');
  const prefix = prefixOf(stream);
  await ensureStream(nc, stream, prefix, { replicas: 1 });
  const js = nc.jetstream();
  for (let i = 0; i < 5; i++) await js.publish(`${prefix}.contact.created`, new TextEncoder().encode(String(i)));
  const wanted = durableConfig('upd', `${prefix}.>`);
  // An older release's consumer: a 5 s ack wait and at most 3 deliveries.
  await jsm.consumers.add(stream, { ...wanted, ack_wait: nanos(5000), max_deliver: 3 });
  // It has handled 2 of the 5 messages.
  const consumer = await js.consumers.get(stream, 'upd');
  for (let i = 0; i < 2; i++) (await consumer.next({ expires: 2000 }))?.ack();
  await nc.flush();

  expect(await ensureConsumer(jsm, stream, wanted, logger)).toEqual({ action: 'updated', changed: ['ack_wait', 'max_deliver'] });
  const info = await jsm.consumers.info(stream, 'upd');
  expect(info.config.ack_wait).toBe(nanos(30_000));
  expect(info.config.max_deliver).toBe(-1);
  expect(info.num_pending).toBe(3); // the position survived the update
  expect(await ensureConsumer(jsm, stream, wanted, logger)).toEqual({ action: 'unchanged' });
});

test('a consumer setting the server cannot change in place is applied by recreating the consumer from its ack floor', async () => {
  const jsm = await nc.jetstreamManager();
  const stream = streamName('RECR');
  const prefix = prefixOf(stream);
  await ensureStream(nc, stream, prefix, { replicas: 1 });
  const js = nc.jetstream();
  for (let i = 1; i <= 6; i++) await js.publish(`${prefix}.contact.created`, new TextEncoder().encode(String(i)));
  const wanted = durableConfig('recr', `${prefix}.>`);
  await jsm.consumers.add(stream, { ...wanted, ack_policy: AckPolicy.All });
  const consumer = await js.consumers.get(stream, 'recr');
  const first = await consumer.next({ expires: 2000 });
  const second = await consumer.next({ expires: 2000 });
  second?.ack(); // AckPolicy.All: acknowledges 1 and 2
  expect(first?.seq).toBe(1);
  await nc.flush();

  const result = await ensureConsumer(jsm, stream, wanted, logger);
  expect(result).toEqual({ action: 'recreated', changed: ['ack_policy'], fromSeq: 3 });
  const info = await jsm.consumers.info(stream, 'recr');
  expect(info.config.ack_policy).toBe(AckPolicy.Explicit);
  expect(info.config.deliver_policy).toBe(DeliverPolicy.StartSequence);
  expect(info.num_pending).toBe(4); // 3..6: nothing skipped, nothing handled twice
  const next = await (await js.consumers.get(stream, 'recr')).next({ expires: 2000 });
  expect(new TextDecoder().decode(next?.data)).toBe('3');
  next?.ack();
  // The start policy of the recreated consumer is not a difference: a later check leaves it alone.
  expect(await ensureConsumer(jsm, stream, wanted, logger)).toEqual({ action: 'unchanged' });
});

// The NATS server of a test's own: it answers once started, refuses connections once stopped, and
// keeps its JetStream data across a restart (what the NATS-restart tests rely on).
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { canConnect } from '@crm/stack';
import { connect } from 'nats';
import { type NatsServer, startNatsServer } from './nats-server.ts';

let nats: NatsServer;

beforeAll(async () => {
  nats = await startNatsServer();
});
afterAll(() => nats.close());

/** The messages in `stream`, read over a new connection. */
async function messages(stream: string): Promise<number> {
  const nc = await connect({ servers: nats.url });
  try {
    return (await (await nc.jetstreamManager()).streams.info(stream)).state.messages;
  } finally {
    await nc.close();
  }
}

test('stopped and started again on the same port, it keeps what JetStream stored', async () => {
  const stream = `NATS_SERVER_${crypto.randomUUID().slice(0, 8).toUpperCase()}`;
  const nc = await connect({ servers: nats.url });
  await (await nc.jetstreamManager()).streams.add({ name: stream, subjects: [`${stream}.>`] });
  const js = nc.jetstream();
  for (let i = 0; i < 3; i++) await js.publish(`${stream}.event`, new TextEncoder().encode(String(i)));
  await nc.close();
  expect(await messages(stream)).toBe(3);

  await nats.stop();
  expect(await canConnect('127.0.0.1', nats.port)).toBe(false);
  await nats.stop(); // stopping a stopped server is nothing

  await nats.start();
  expect(await canConnect('127.0.0.1', nats.port)).toBe(true);
  expect(await messages(stream)).toBe(3);
});

test('close stops it and removes its data directory', async () => {
  const other = await startNatsServer();
  expect(other.port).not.toBe(nats.port);
  expect(existsSync(other.dataDir)).toBe(true);
  await other.close();
  expect(await canConnect('127.0.0.1', other.port)).toBe(false);
  expect(existsSync(other.dataDir)).toBe(false);
});

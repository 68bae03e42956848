// A NATS server of a test's own, for the tests that stop NATS and start it again while the stack
// writes (the shared stack's NATS must stay up for every other test).

import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureNats, freePort } from '@crm/stack';

export interface NatsServer {
  port: number;
  /** `nats://127.0.0.1:<port>`: the value for `startStack({ natsUrl })`. */
  url: string;
  /** The server's directory: its JetStream data and its log (a new temporary directory; `close` removes it). */
  dataDir: string;
  /** Starts the server again on the same port with the same JetStream data; resolves once the port accepts connections. */
  start(): Promise<void>;
  /** Stops the server (SIGTERM) and resolves once it has exited; nothing to do when it is not running. */
  stop(): Promise<void>;
  /** Stops the server and removes its data directory. */
  close(): Promise<void>;
}

/**
 * Starts a nats-server with JetStream on a free loopback port, its data in a new temporary
 * directory: `ensureNats`, the start-up `npm start` uses, so it resolves once the port accepts
 * connections and fails after 30 s otherwise.
 */
export async function startNatsServer(): Promise<NatsServer> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'crm-nats-'));
  let child: ChildProcess | undefined;
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;

  const server: NatsServer = {
    port,
    url: `nats://127.0.0.1:${port}`,
    dataDir,
    async start() {
      if (running()) return;
      child = (await ensureNats(server.url, dataDir, () => {}))?.process;
    },
    async stop() {
      if (!running()) return;
      const exiting = child as ChildProcess;
      const exited = new Promise((resolve) => exiting.once('exit', resolve));
      exiting.kill('SIGTERM');
      await exited;
    },
    async close() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}

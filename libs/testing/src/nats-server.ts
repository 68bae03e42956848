// A NATS server of a test's own, for the tests that stop NATS and start it again while the stack
// writes (the shared stack's NATS must stay up for every other test).

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canConnect, freePort, natsServerBinary } from '@crm/stack';
import { until } from './poll.ts';

export interface NatsServer {
  port: number;
  /** `nats://127.0.0.1:<port>`: the value for `startStack({ natsUrl })`. */
  url: string;
  /** Where JetStream keeps its data (a new temporary directory; `close` removes it). */
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
 * directory, and resolves once the port accepts connections (20 s at most, then an error that
 * names the port).
 */
export async function startNatsServer(): Promise<NatsServer> {
  const binary = natsServerBinary();
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
      child = spawn(binary, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dataDir], { stdio: 'ignore' });
      await until(`nats-server on 127.0.0.1:${port} to accept connections`, () => canConnect('127.0.0.1', port), {
        timeoutMs: 20_000,
        everyMs: 50,
      });
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

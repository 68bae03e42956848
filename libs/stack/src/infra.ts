import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether something accepts TCP connections on host:port. */
export function canConnect(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Polls `probe` every 200 ms until it is true; throws naming `what` after the timeout. */
export async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await sleep(200);
  }
  throw new Error(`${what} did not come up within ${timeoutMs / 1000}s`);
}

/**
 * The installed nats-server (Debian package or a copy on the PATH's usual places); throws
 * `missing` when there is none.
 */
export function natsServerBinary(missing = 'nats-server is not installed'): string {
  const binary = ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'].find(existsSync);
  if (!binary) throw new Error(missing);
  return binary;
}

export interface Started {
  name: string;
  process?: ChildProcess;
}

/**
 * Makes sure PostgreSQL answers at `url`. When it is the local default and down, starts the
 * installed Debian cluster (pg_ctlcluster); returns whether we started it.
 */
export async function ensurePostgres(url: string, log: (m: string) => void): Promise<boolean> {
  const { hostname, port } = new URL(url);
  if (await canConnect(hostname, Number(port || 5432))) return false;
  const isLocal = hostname === '127.0.0.1' || hostname === 'localhost';
  if (!isLocal || !existsSync('/etc/postgresql')) throw new Error(`PostgreSQL is not reachable at ${hostname}:${port}`);
  const version = readdirSync('/etc/postgresql')[0];
  log(`starting PostgreSQL ${version} (pg_ctlcluster)…`);
  spawnSync('pg_ctlcluster', ['--skip-systemctl-redirect', String(version), 'main', 'start'], { stdio: 'inherit' });
  await waitFor('PostgreSQL', () => canConnect(hostname, Number(port || 5432)));
  return true;
}

/** host and port of one NATS server URL (`nats://h:p`, `tls://h:p` or `h:p`). */
function natsAddress(server: string): { hostname: string; port: number } {
  const { hostname, port } = new URL(/^[a-z]+:\/\//.test(server) ? server.replace(/^[a-z]+:/, 'http:') : `http://${server}`);
  return { hostname, port: Number(port || 4222) };
}

/**
 * Makes sure NATS (with JetStream) answers at `url`; starts the installed nats-server when local
 * and down. `url` may list several servers (a cluster, comma-separated): then at least one must
 * answer, and none is started (a cluster is started with `startNatsCluster`).
 */
export async function ensureNats(url: string, dataDir: string, log: (m: string) => void): Promise<Started | undefined> {
  const servers = url
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (servers.length > 1) {
    for (const server of servers) {
      const { hostname, port } = natsAddress(server);
      if (await canConnect(hostname, port)) return undefined;
    }
    throw new Error(`none of the NATS servers ${servers.join(', ')} is reachable`);
  }
  const { hostname, port: p } = natsAddress(servers[0] ?? url);
  if (await canConnect(hostname, p)) return undefined;
  const binary = natsServerBinary(`NATS is not reachable at ${hostname}:${p} and nats-server is not installed`);
  mkdirSync(join(dataDir, 'nats'), { recursive: true });
  log(`starting nats-server with JetStream on ${hostname}:${p}…`);
  const child = spawn(binary, ['-a', hostname, '-p', String(p), '-js', '-sd', join(dataDir, 'nats')], {
    stdio: ['ignore', openSync(join(dataDir, 'nats.log'), 'a'), openSync(join(dataDir, 'nats.log'), 'a')],
  });
  await waitFor('NATS', () => canConnect(hostname, p));
  return { name: 'nats', process: child };
}

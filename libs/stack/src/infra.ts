import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { ensureGoTool } from './tools.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await sleep(200);
  }
  throw new Error(`${what} did not come up within ${timeoutMs / 1000}s`);
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

/** Makes sure NATS (with JetStream) answers at `url`; starts the installed nats-server when local and down. */
export async function ensureNats(url: string, dataDir: string, log: (m: string) => void): Promise<Started | undefined> {
  const { hostname, port } = new URL(url.replace(/^nats:/, 'http:'));
  const p = Number(port || 4222);
  if (await canConnect(hostname, p)) return undefined;
  const binary = ['/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'].find(existsSync);
  if (!binary) throw new Error(`NATS is not reachable at ${hostname}:${p} and nats-server is not installed`);
  mkdirSync(join(dataDir, 'nats'), { recursive: true });
  log(`starting nats-server with JetStream on ${hostname}:${p}…`);
  const child = spawn(binary, ['-a', hostname, '-p', String(p), '-js', '-sd', join(dataDir, 'nats')], {
    stdio: ['ignore', openSync(join(dataDir, 'nats.log'), 'a'), openSync(join(dataDir, 'nats.log'), 'a')],
  });
  await waitFor('NATS', () => canConnect(hostname, p));
  return { name: 'nats', process: child };
}

export interface S3Env {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  region: string;
}

/**
 * Makes sure an S3 server answers at the endpoint. For the local default, builds MinIO once
 * (pinned, cached) and starts it with its data under `dataDir`; `detached` leaves it running
 * after this process (the test harness shares one MinIO between runs).
 */
export async function ensureMinio(s3: S3Env, dataDir: string, log: (m: string) => void, detached = false): Promise<Started | undefined> {
  const { hostname, port } = new URL(s3.endpoint);
  const p = Number(port || 80);
  const healthy = async () => {
    try {
      return (await fetch(`${s3.endpoint}/minio/health/live`, { signal: AbortSignal.timeout(1000) })).ok;
    } catch {
      return false;
    }
  };
  if (await canConnect(hostname, p)) {
    await waitFor('MinIO', healthy);
    return undefined;
  }
  if (hostname !== '127.0.0.1' && hostname !== 'localhost') throw new Error(`S3 is not reachable at ${s3.endpoint}`);
  const binary = ensureGoTool('minio', log);
  const dir = join(dataDir, 'minio');
  mkdirSync(dir, { recursive: true });
  log(`starting MinIO on ${hostname}:${p} (data in ${dir})…`);
  const logFile = openSync(join(dataDir, 'minio.log'), 'a');
  const child = spawn(binary, ['server', dir, '--address', `${hostname}:${p}`, '--console-address', `${hostname}:${p + 1}`, '--quiet'], {
    env: { ...process.env, MINIO_ROOT_USER: s3.accessKey, MINIO_ROOT_PASSWORD: s3.secretKey, MINIO_BROWSER: 'off' },
    stdio: ['ignore', logFile, logFile],
    detached,
  });
  if (detached) child.unref();
  await waitFor('MinIO', healthy, 60_000);
  return { name: 'minio', process: detached ? undefined : child };
}

/** An S3 client for the given settings (path-style, as MinIO wants). */
export function s3Client(s3: S3Env): S3Client {
  return new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey },
  });
}

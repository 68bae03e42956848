import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { ListBucketsCommand, S3Client } from '@aws-sdk/client-s3';
import { canConnect, type Started, sleep, waitFor } from './infra.ts';
import { ensureGoTool, toolCacheDir } from './tools.ts';

export interface S3Env {
  endpoint: string;
  accessKey: string;
  secretKey: string;
  region: string;
  /** True when the keys are the generated local ones (so a local MinIO may be restarted with them). */
  generated?: boolean;
}

/**
 * Where the generated credentials of the local MinIO are kept: the user's state directory, never
 * the repository. One MinIO serves every checkout on the machine (port 9000), so its keys are the
 * machine's too — two checkouts with keys of their own would restart it under each other.
 */
export const localS3CredentialsFile = join(
  process.env.XDG_STATE_HOME ?? join(homedir(), '.local', 'state'),
  'crm-api',
  's3-credentials.json',
);

/**
 * The local MinIO's credentials: read from `file`, or generated once (random, never MinIO's
 * well-known default) and written there with mode 0600. Concurrent first runs agree: the file
 * appears atomically (link of a complete temporary file) and the loser reads the winner's.
 */
export function generatedS3Credentials(file = localS3CredentialsFile): { accessKey: string; secretKey: string } {
  const read = () => {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { access_key: string; secret_key: string };
    return { accessKey: saved.access_key, secretKey: saved.secret_key };
  };
  if (existsSync(file)) return read();
  mkdirSync(dirname(file), { recursive: true });
  const fresh = { access_key: `crm-${randomBytes(6).toString('hex')}`, secret_key: randomBytes(30).toString('base64url') };
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(temporary, `${JSON.stringify(fresh, null, 2)}\n`, { mode: 0o600 });
  try {
    linkSync(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(temporary);
  }
  return read();
}

/**
 * S3 settings from the environment. S3_ACCESS_KEY/S3_SECRET_KEY win when set; otherwise the
 * generated local credentials (contract §20: the local MinIO never runs with minioadmin).
 */
export function localS3(env: Record<string, string | undefined> = process.env, credentialsFile = localS3CredentialsFile): S3Env {
  const base = { endpoint: env.S3_ENDPOINT ?? 'http://127.0.0.1:9000', region: env.S3_REGION ?? 'us-east-1' };
  if (env.S3_ACCESS_KEY && env.S3_SECRET_KEY) return { ...base, accessKey: env.S3_ACCESS_KEY, secretKey: env.S3_SECRET_KEY };
  return { ...base, ...generatedS3Credentials(credentialsFile), generated: true };
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

/** Whether the S3 server accepts these keys (a signed ListBuckets); false only for a credentials refusal. */
export async function acceptsCredentials(s3: S3Env): Promise<boolean> {
  const client = s3Client(s3);
  try {
    await client.send(new ListBucketsCommand({}));
    return true;
  } catch (error) {
    const name = (error as Error).name;
    if (['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied'].includes(name)) return false;
    throw error;
  } finally {
    client.destroy();
  }
}

const isLoopback = (hostname: string) => hostname === '127.0.0.1' || hostname === 'localhost';

/**
 * The pid of a MinIO this project started (the pinned binary from the tool cache) serving
 * `address`, found through /proc: a MinIO left running by an earlier run, perhaps with other keys.
 */
function ourMinioPid(address: string): number | undefined {
  if (!existsSync('/proc')) return undefined;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    const [binary = '', command] = args;
    if (binary.startsWith(toolCacheDir()) && binary.endsWith('/minio') && command === 'server' && args.includes(address))
      return Number(entry);
  }
  return undefined;
}

/** Runs `work` holding a lock directory, so parallel test runs never start or restart MinIO twice. */
async function withLock<T>(lock: string, work: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // A holder that died leaves its lock behind; no start takes two minutes.
      const since = statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
      if (Date.now() - since > 120_000) rmSync(lock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`could not take ${lock}`);
      await sleep(200);
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * Makes sure an S3 server answers at the endpoint with these keys. For the local default it
 * builds MinIO once (pinned, cached) and starts it with the keys and its data under `dataDir`;
 * a MinIO of ours that refuses generated keys (started by an older checkout with MinIO's
 * default credentials) is restarted with them, its data kept. `detached` leaves MinIO running
 * after this process (the test harness shares one MinIO between runs).
 */
export async function ensureMinio(s3: S3Env, dataDir: string, log: (m: string) => void, detached = false): Promise<Started | undefined> {
  const { hostname, port } = new URL(s3.endpoint);
  const p = Number(port || 80);
  const address = `${hostname}:${p}`;
  const healthy = async () => {
    try {
      return (await fetch(`${s3.endpoint}/minio/health/live`, { signal: AbortSignal.timeout(1000) })).ok;
    } catch {
      return false;
    }
  };
  const ready = async () => {
    if (!(await canConnect(hostname, p))) return false;
    await waitFor('MinIO', healthy);
    return acceptsCredentials(s3);
  };
  if (await ready()) return undefined;
  if (!isLoopback(hostname)) throw new Error(`S3 at ${s3.endpoint} is not reachable or refuses S3_ACCESS_KEY/S3_SECRET_KEY`);
  mkdirSync(dataDir, { recursive: true });
  return withLock(join(dataDir, 'minio.lock'), async () => {
    if (await ready()) return undefined; // another run fixed it while we waited for the lock
    if (await canConnect(hostname, p)) {
      const pid = s3.generated ? ourMinioPid(address) : undefined;
      if (pid === undefined) {
        throw new Error(
          `the S3 server at ${address} refuses ${s3.generated ? `the generated credentials (${localS3CredentialsFile})` : 'S3_ACCESS_KEY/S3_SECRET_KEY'}; stop it or set the keys it expects`,
        );
      }
      log(`restarting MinIO on ${address} (pid ${pid}) with the generated credentials instead of its old ones…`);
      process.kill(pid, 'SIGTERM');
      await waitFor('the old MinIO to stop', async () => !(await canConnect(hostname, p)));
    }
    return startMinio(s3, address, dataDir, log, detached, healthy);
  });
}

async function startMinio(
  s3: S3Env,
  address: string,
  dataDir: string,
  log: (m: string) => void,
  detached: boolean,
  healthy: () => Promise<boolean>,
): Promise<Started> {
  const binary = ensureGoTool('minio', log);
  const dir = join(dataDir, 'minio');
  mkdirSync(dir, { recursive: true });
  log(`starting MinIO on ${address} (data in ${dir})…`);
  const [hostname, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
  const logFile = openSync(join(dataDir, 'minio.log'), 'a');
  const child = spawn(binary, ['server', dir, '--address', address, '--console-address', `${hostname}:${port + 1}`, '--quiet'], {
    env: { ...process.env, MINIO_ROOT_USER: s3.accessKey, MINIO_ROOT_PASSWORD: s3.secretKey, MINIO_BROWSER: 'off' },
    stdio: ['ignore', logFile, logFile],
    detached,
  });
  if (detached) child.unref();
  await waitFor('MinIO', healthy, 60_000);
  if (!(await acceptsCredentials(s3))) throw new Error(`MinIO on ${address} started but refuses its own credentials`);
  return { name: 'minio', process: detached ? undefined : child };
}

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DeleteBucketCommand, DeleteObjectsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { ensureDatabase } from '@crm/db';
import {
  ensureMinio,
  ensureNats,
  ensurePostgres,
  freePort,
  type ProcessName,
  portEnv,
  processNames,
  type Runtime,
  repoRoot,
  type S3Env,
  type ServiceProcess,
  s3Client,
  spawnService,
  waitReady,
} from '@crm/stack';
import { connect } from 'nats';
import pg from 'pg';
import { type ApiResponse, type RequestOptions, send } from './client.ts';

export interface TenantInput {
  name?: string;
  users?: { email: string; name: string }[];
  limits?: { read_per_minute?: number; write_per_minute?: number };
}

export interface TestTenant {
  tenantId: string;
  apiKey: string;
  users: { id: number; email: string; name: string }[];
  /** A request through the gateway with this tenant's key. */
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
}

export interface StackOptions {
  runtime?: Runtime;
  /** Extra environment for every process (e.g. short webhook retry schedules). */
  env?: Record<string, string>;
  /** A NATS server of the test's own (fault tests stop and start it). */
  natsUrl?: string;
}

const quiet = () => {};

/**
 * Starts the real stack for a test run: all five services as child processes on free
 * ports, against the real PostgreSQL, NATS and MinIO, with a database, JetStream stream and
 * bucket of its own that `stop()` removes again.
 */
export async function startStack(options: StackOptions = {}) {
  const runId = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const baseDb = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const natsUrl = options.natsUrl ?? process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
  const dataDir = join(repoRoot, '.data');
  const s3: S3Env = {
    endpoint: process.env.S3_ENDPOINT ?? 'http://127.0.0.1:9000',
    accessKey: process.env.S3_ACCESS_KEY ?? 'minioadmin',
    secretKey: process.env.S3_SECRET_KEY ?? 'minioadmin',
    region: process.env.S3_REGION ?? 'us-east-1',
  };
  mkdirSync(dataDir, { recursive: true });
  await ensurePostgres(baseDb, quiet);
  await ensureNats(natsUrl, dataDir, quiet);
  await ensureMinio(s3, dataDir, quiet, true);

  const dbUrl = new URL(baseDb);
  dbUrl.pathname = `/crm_test_${runId}`;
  const databaseUrl = dbUrl.toString();
  await ensureDatabase(databaseUrl);

  const ports = Object.fromEntries(await Promise.all(processNames.map(async (n) => [n, await freePort()]))) as Record<ProcessName, number>;
  const adminToken = `admin-${crypto.randomUUID()}`;
  const internalToken = `internal-${crypto.randomUUID()}`;
  const stream = `CRM_EVENTS_T${runId.toUpperCase()}`;
  const subjectPrefix = `crmt${runId}.events`;
  const bucket = `crm-test-${runId}`;
  const env: Record<string, string> = {
    ...portEnv(ports),
    DATABASE_URL: databaseUrl,
    NATS_URL: natsUrl,
    INTERNAL_TOKEN: internalToken,
    ADMIN_TOKEN: adminToken,
    EVENTS_STREAM: stream,
    EVENTS_SUBJECT_PREFIX: subjectPrefix,
    S3_ENDPOINT: s3.endpoint,
    S3_ACCESS_KEY: s3.accessKey,
    S3_SECRET_KEY: s3.secretKey,
    S3_REGION: s3.region,
    S3_BUCKET: bucket,
    WEBHOOK_ALLOWED_NETS: '127.0.0.0/8,::1/128',
    LOG_LEVEL: 'info',
    ...options.env,
  };
  const logDir = join(dataDir, 'test-logs', runId);
  const processes = {} as Record<ProcessName, ServiceProcess>;
  const extra: ServiceProcess[] = [];

  async function startProcess(name: ProcessName, extraEnv: Record<string, string> = {}, port = ports[name]) {
    const proc = spawnService({
      name,
      port,
      env: { ...env, ...extraEnv, ...(name === 'gateway' ? { GATEWAY_PORT: String(port) } : {}) },
      runtime: options.runtime,
      logFile: join(logDir, `${name}${port === ports[name] ? '' : `-${port}`}.log`),
    });
    await waitReady(proc, 90_000);
    return proc;
  }

  try {
    const started = await Promise.all(processNames.filter((n) => n !== 'gateway').map((n) => startProcess(n)));
    for (const proc of started) processes[proc.name] = proc;
    processes.gateway = await startProcess('gateway');
  } catch (error) {
    await Promise.all(Object.values(processes).map((p) => p.stop('SIGKILL')));
    throw error;
  }

  const gatewayUrl = processes.gateway.url;
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });

  async function admin<T = any>(method: string, path: string, body?: unknown): Promise<ApiResponse<T>> {
    return send<T>(gatewayUrl, method, path, { body, headers: { authorization: `Bearer ${adminToken}` } });
  }

  async function createTenant(input: TenantInput = {}): Promise<TestTenant> {
    const response = await admin('POST', '/admin/tenants', {
      name: input.name ?? `Tenant ${crypto.randomUUID().slice(0, 8)}`,
      users: input.users ?? [{ email: 'owner@example.test', name: 'Olive Owner' }],
      // Tests make many writes; a generous budget unless a test is about limits.
      limits: { read_per_minute: 100_000, write_per_minute: 100_000, ...input.limits },
    });
    if (response.status !== 201) throw new Error(`tenant creation failed: ${response.status} ${response.text}`);
    const { tenant_id, api_key, users } = response.body.data;
    return {
      tenantId: tenant_id,
      apiKey: api_key,
      users,
      request: (method, path, opts = {}) => send(gatewayUrl, method, path, { ...opts, headers: { 'x-api-key': api_key, ...opts.headers } }),
    };
  }

  return {
    runId,
    gatewayUrl,
    adminToken,
    internalToken,
    databaseUrl,
    natsUrl,
    stream,
    subjectPrefix,
    bucket,
    s3,
    env,
    ports,
    processes,
    logDir,
    /** Direct SQL on the run's database (schemas: gateway, sales, catalog, documents, webhooks). */
    sql: <R extends pg.QueryResultRow = any>(text: string, params: unknown[] = []) => pool.query<R>(text, params),
    admin,
    createTenant,
    /** A request to any process by name (internal credential not included). */
    call: (name: ProcessName, method: string, path: string, opts?: RequestOptions) => send(processes[name].url, method, path, opts),
    /** Stops one process (SIGTERM by default) and resolves with its exit code. */
    stopProcess: (name: ProcessName, signal?: NodeJS.Signals) => processes[name].stop(signal),
    /** Starts a stopped process again on its port and waits until it is ready. */
    async restartProcess(name: ProcessName, extraEnv: Record<string, string> = {}) {
      processes[name] = await startProcess(name, extraEnv);
    },
    /** Starts one more gateway replica sharing this stack's database and NATS; returns it. */
    async startGatewayReplica(extraEnv: Record<string, string> = {}) {
      const proc = await startProcess('gateway', extraEnv, await freePort());
      extra.push(proc);
      return proc;
    },
    async stop() {
      await Promise.all([...Object.values(processes), ...extra].map((p) => p.stop('SIGTERM')));
      await pool.end();
      await dropRunResources({ baseDb, databaseUrl, natsUrl, stream, s3, bucket });
    },
  };
}

export type Stack = Awaited<ReturnType<typeof startStack>>;

async function dropRunResources(r: { baseDb: string; databaseUrl: string; natsUrl: string; stream: string; s3: S3Env; bucket: string }) {
  const client = new pg.Client({ connectionString: r.baseDb });
  await client.connect().catch(() => {});
  await client.query(`drop database if exists "${new URL(r.databaseUrl).pathname.slice(1)}" with (force)`).catch(() => {});
  await client.end().catch(() => {});
  try {
    const nc = await connect({ servers: r.natsUrl, timeout: 2000 });
    const jsm = await nc.jetstreamManager();
    await jsm.streams.delete(r.stream).catch(() => {});
    await nc.close();
  } catch {
    // NATS down (a fault test may have stopped it); the stream ages out by itself.
  }
  const s3 = s3Client(r.s3);
  try {
    for (;;) {
      const listed = await s3.send(new ListObjectsV2Command({ Bucket: r.bucket }));
      const keys = (listed.Contents ?? []).map((o) => ({ Key: o.Key as string }));
      if (keys.length === 0) break;
      await s3.send(new DeleteObjectsCommand({ Bucket: r.bucket, Delete: { Objects: keys } }));
    }
    await s3.send(new DeleteBucketCommand({ Bucket: r.bucket }));
  } catch {
    // bucket never created or already gone
  } finally {
    s3.destroy();
  }
}

const SHARED = Symbol.for('crm.sharedStack');

/**
 * One stack shared by every test file of a run (started on first use, stopped by the
 * preload's afterAll). Tests that stop or restart processes start their own with startStack().
 */
export function sharedStack(): Promise<Stack> {
  const g = globalThis as any;
  g[SHARED] ??= startStack();
  return g[SHARED];
}

/** Stops the shared stack if one was started. */
export async function stopSharedStack(): Promise<void> {
  const g = globalThis as any;
  if (g[SHARED]) await (await g[SHARED]).stop();
  g[SHARED] = undefined;
}

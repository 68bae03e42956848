import { join } from 'node:path';
import { freePort, type ProcessName, portEnv, processNames, type Runtime, type ServiceProcess, spawnService, waitReady } from '@crm/stack';
import pg from 'pg';
import { type ApiResponse, type RequestOptions, send } from './client.ts';
import { dropRunResources, endPool, prepareRun } from './run-resources.ts';

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
  /** A NATS server of the test's own (fault tests stop and start it), or a comma-separated cluster list. */
  natsUrl?: string;
  /** A PostgreSQL server of the test's own (fault tests restart it): any database URL on it. */
  baseDb?: string;
}

/**
 * Starts the real stack for a test run: all five services as child processes on free
 * ports, against the real PostgreSQL, NATS and MinIO, with a database, JetStream stream and
 * bucket of its own that `stop()` removes again.
 */
export async function startStack(options: StackOptions = {}) {
  const run = await prepareRun('test', { natsUrl: options.natsUrl, baseDb: options.baseDb });
  const { runId, databaseUrl, natsUrl, stream, subjectPrefix, bucket, s3, dataDir, adminToken, internalToken } = run;

  const ports = Object.fromEntries(await Promise.all(processNames.map(async (n) => [n, await freePort()]))) as Record<ProcessName, number>;
  const opsPort = await freePort();
  const env: Record<string, string> = { ...run.env, ...portEnv(ports), ...options.env };
  const logDir = join(dataDir, 'test-logs', runId);
  const processes = {} as Record<ProcessName, ServiceProcess>;
  const extra: ServiceProcess[] = [];

  async function startProcess(name: ProcessName, extraEnv: Record<string, string> = {}, port = ports[name], ops = opsPort) {
    const proc = spawnService({
      name,
      port,
      opsPort: ops,
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
  /** The gateway's operations port: /metrics (not served on the public port), /livez, /readyz. */
  const gatewayOpsUrl = `http://127.0.0.1:${opsPort}`;
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
    gatewayOpsUrl,
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
    /** Starts one more gateway replica sharing this stack's database and NATS; returns it (with its own `opsUrl`). */
    async startGatewayReplica(extraEnv: Record<string, string> = {}) {
      const proc = await startProcess('gateway', extraEnv, await freePort(), await freePort());
      extra.push(proc);
      return proc;
    },
    async stop() {
      await Promise.all([...Object.values(processes), ...extra].map((p) => p.stop('SIGTERM')));
      await endPool(pool);
      await dropRunResources(run);
    },
  };
}

export type Stack = Awaited<ReturnType<typeof startStack>>;

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

// What `npm run bench` measures, for one runtime: a stack of its own, a tenant with one fully
// filled contact among others, the floor server and nginx in front of sales; the four read paths
// answer that contact with the same bytes (checked here before anything is measured).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { childEnv, freePort, type Runtime, repoRoot, runtimeEnv, waitReady } from '@crm/stack';
import { startStack } from '@crm/testing';
import { childrenOf, type Watched } from './cpu.ts';
import { startNginx } from './nginx.ts';
import { type LoadTenant, provisionTenant, raisedLimits } from './target.ts';

/** How the bench names the contact it reads: by id, by exact name, by e-mail. */
export type IdentifierKind = 'id' | 'name' | 'email';

export const BENCH_CONTACT = {
  name: 'Bench Contact Ltd',
  type: 'client',
  email: 'bench.contact@example.test',
  cif: 'B12345678',
  phone: '+34 600 000 000',
  web: 'https://bench.example.test',
  is_person: false,
  comments: 'The contact every read case of the bench answers.',
  location: { primary: 1, direction: 'Calle Mayor 1', city: 'Madrid', postal: '28013', country: 'ES' },
  extra_fields: { tier: 'gold', score: 7, tags: ['a', 'b'] },
};

export interface BenchTarget {
  runtime: Runtime;
  tenant: LoadTenant;
  /** Path of the bench contact per identifier kind (`/v1/contacts/…`). */
  paths: Record<IdentifierKind, string>;
  urls: { floor: string; sales: string; gateway: string; nginx: string; proxy: string };
  /** The headers the gateway sends a service (nginx sets them too). */
  internal: Record<string, string>;
  /** Process groups whose CPU is accounted per case. */
  watched: Watched[];
  /** SQL statements sales and the gateway have sent so far (their `db_queries_total`). */
  statements(): Promise<{ sales: number; gateway: number }>;
  env: Record<string, string>;
  stop(): Promise<void>;
}

async function post(url: string, headers: Record<string, string>, body: unknown) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`POST ${url} → ${response.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** Starts a reference server of loadtest/ (`floor-server.ts`, `proxy-floor.ts`) under the runtime. */
async function startReference(runtime: Runtime, script: string, env: (port: number) => Record<string, string>) {
  const port = await freePort();
  const entry = join(repoRoot, 'loadtest', script);
  const binary = join(repoRoot, 'node_modules', '.bin', runtime);
  const child = spawn(binary, runtime === 'deno' ? ['run', '-A', '--quiet', entry] : [entry], {
    cwd: repoRoot,
    // The stack's runtime settings too, so that the references differ from it in code only.
    env: childEnv(runtimeEnv(), env(port)),
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const proc = { name: 'sales' as const, url: `http://127.0.0.1:${port}`, child, stop: async () => null };
  await waitReady(proc);
  return { url: proc.url, pid: child.pid as number, stop: () => child.kill('SIGTERM') };
}

/** The same bytes on every read path, or an error naming the first path that differs. */
async function assertSameBytes(target: BenchTarget): Promise<void> {
  for (const [kind, path] of Object.entries(target.paths)) {
    const read = async (base: string, headers: Record<string, string>) => {
      const response = await fetch(base + path, { headers });
      return { status: response.status, text: await response.text() };
    };
    const sales = await read(target.urls.sales, target.internal);
    if (sales.status !== 200) throw new Error(`sales answered ${sales.status} to ${path}: ${sales.text.slice(0, 300)}`);
    const others = {
      floor: await read(target.urls.floor, target.internal),
      gateway: await read(target.urls.gateway, { 'x-api-key': target.tenant.api_key }),
      nginx: await read(target.urls.nginx, {}),
      proxy: await read(target.urls.proxy, {}),
    };
    for (const [name, other] of Object.entries(others)) {
      if (other.status !== 200 || other.text !== sales.text)
        throw new Error(`${name} (by ${kind}) differs from sales:\n  sales ${sales.text}\n  ${name} ${other.status} ${other.text}`);
    }
  }
}

/** A stack under `runtime` with everything the read and write cases need, bytes checked. */
export async function startBenchTarget(runtime: Runtime, log: (m: string) => void): Promise<BenchTarget> {
  log(`starting a ${runtime} stack of its own…`);
  const stack = await startStack({ runtime, env: { LOG_LEVEL: 'warn' } });
  const stops: (() => unknown)[] = [() => stack.stop()];
  const stop = async () => {
    for (const s of stops.reverse()) await s();
  };
  try {
    const tenant = await provisionTenant(stack, `bench-${runtime}`, raisedLimits);
    const key = { 'x-api-key': tenant.api_key };
    // Others around it, so the indexes the reads walk are not trivially small.
    for (let batch = 0; batch < 3; batch += 1) {
      const data = Array.from({ length: 100 }, (_, i) => ({
        name: `Other ${batch * 100 + i}`,
        type: 'lead',
        email: `other-${batch * 100 + i}@example.test`,
        cif: `X${batch * 100 + i}`,
      }));
      await post(`${stack.gatewayUrl}/v1/contacts/batch`, key, { data });
    }
    const created = await post(`${stack.gatewayUrl}/v1/contacts`, key, { ...BENCH_CONTACT, users: [tenant.user_email] });
    const id = (created as { data: { id: number } }).data.id;
    const internal = { 'x-internal-token': stack.internalToken, 'x-tenant-id': tenant.tenant_id };
    const floor = await startReference(runtime, 'floor-server.ts', (port) => ({
      DATABASE_URL: stack.databaseUrl,
      FLOOR_PORT: String(port),
    }));
    stops.push(floor.stop);
    const proxy = await startReference(runtime, 'proxy-floor.ts', (port) => ({
      UPSTREAM_URL: stack.processes.sales.url,
      PROXY_PORT: String(port),
      PROXY_HEADERS: JSON.stringify(internal),
    }));
    stops.push(proxy.stop);
    const nginxPort = await freePort();
    const nginx = await startNginx([{ port: nginxPort, upstreams: [new URL(stack.processes.sales.url).host], setHeaders: internal }], {
      workers: Number(process.env.NGINX_WORKERS ?? 1),
      log,
    });
    stops.push(() => nginx.stop());
    /** The run database's backends, or only those of one pool (libs/db names each service's `crm-<schema>`). */
    const backends = (applicationName?: string) => async () =>
      (
        await stack.sql<{ pid: number }>(
          'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and ($1::text is null or application_name = $1)',
          [applicationName ?? null],
        )
      ).rows.map((r) => r.pid);
    const target: BenchTarget = {
      runtime,
      tenant,
      paths: {
        id: `/v1/contacts/${id}`,
        name: `/v1/contacts/${encodeURIComponent(BENCH_CONTACT.name)}`,
        email: `/v1/contacts/${encodeURIComponent(BENCH_CONTACT.email)}`,
      },
      urls: {
        floor: floor.url,
        sales: stack.processes.sales.url,
        gateway: stack.gatewayUrl,
        nginx: `http://127.0.0.1:${nginxPort}`,
        proxy: proxy.url,
      },
      internal,
      watched: [
        { label: 'floor', pids: () => [floor.pid] },
        { label: 'sales', pids: () => [stack.processes.sales.child.pid as number] },
        { label: 'gateway', pids: () => [stack.processes.gateway.child.pid as number] },
        { label: 'nginx', pids: () => childrenOf(nginx.pid as number) },
        { label: 'proxy', pids: () => [proxy.pid] },
        { label: 'postgres', pids: backends() },
        { label: 'gw-pg', pids: backends('crm-gateway'), partOf: 'postgres' },
      ],
      env: stack.env,
      async statements() {
        const count = async (url: string) => {
          const text = await (await fetch(`${url}/metrics`)).text();
          return Number(/^db_queries_total(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1] ?? Number.NaN);
        };
        return { sales: await count(stack.processes.sales.url), gateway: await count(stack.gatewayOpsUrl) };
      },
      stop,
    };
    await assertSameBytes(target);
    log(`${runtime}: floor, sales, gateway and nginx answer the same bytes by id, name and e-mail`);
    return target;
  } catch (error) {
    await stop();
    throw error;
  }
}

import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GATEWAY_DEFAULT_PORT, GATEWAY_OPS_DEFAULT_PORT, type ServiceName, services } from '@crm/contracts';

/** The repository root. */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

export type ProcessName = 'gateway' | ServiceName;
/** Start order: services first, the gateway last. */
export const processNames: ProcessName[] = ['sales', 'catalog', 'documents', 'webhooks', 'gateway'];
export type Runtime = 'bun' | 'deno';

/** Ports `freePort` has handed out in this process. */
const handedOut = new Set<number>();

/** A port the kernel picks on loopback, released again at once. */
function kernelPickedPort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolvePort(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * A free TCP port on loopback, never one this process was given before. The kernel may hand a
 * released port out again at once, while whoever was given it has not bound it yet: a stack's
 * gateway once got its public port again as its operations port and could not start.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await kernelPickedPort();
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

/** Port env variables and service URLs for a set of ports. */
export function portEnv(ports: Record<ProcessName, number>): Record<string, string> {
  const env: Record<string, string> = { GATEWAY_PORT: String(ports.gateway) };
  for (const [name, s] of Object.entries(services)) {
    const port = ports[name as ServiceName];
    env[s.portEnv] = String(port);
    env[s.urlEnv] = `http://127.0.0.1:${port}`;
  }
  return env;
}

/** Default ports, each overridable by its env variable. */
export function defaultPorts(env: Record<string, string | undefined> = process.env): Record<ProcessName, number> {
  const ports = { gateway: Number(env.GATEWAY_PORT ?? GATEWAY_DEFAULT_PORT) } as Record<ProcessName, number>;
  for (const [name, s] of Object.entries(services)) ports[name as ServiceName] = Number(env[s.portEnv] ?? s.port);
  return ports;
}

/** The gateway's operations port (/metrics, /livez, /readyz): GATEWAY_OPS_PORT or 9090. */
export function defaultOpsPort(env: Record<string, string | undefined> = process.env): number {
  return Number(env.GATEWAY_OPS_PORT ?? GATEWAY_OPS_DEFAULT_PORT);
}

/**
 * Environment every Bun process of the stack starts with (a value already in the environment
 * wins; `PROCESS_RUNTIME_ENV` says where one process differs). `MIMALLOC_PURGE_DELAY=-1`: Bun's
 * allocator (mimalloc) keeps the pages it has freed instead of handing them back to the kernel
 * 10 ms later, so a busy server does not fault the same pages in again and again. On a VM where a
 * page fault is dear (12 µs on the twenty-second session's, loadtest/README.md) that was a fifth
 * or more of the gateway's CPU per read; the price is that a process's resident memory stays at
 * its peak. It is mimalloc's own variable: a runtime without mimalloc does nothing with it.
 */
export const RUNTIME_ENV: Record<string, string> = { MIMALLOC_PURGE_DELAY: '-1' };

/**
 * Where a process's runtime environment differs from RUNTIME_ENV. documents keeps mimalloc's
 * own purge delay (10 ms): its work is streaming uploads in and out, not small reads, and with
 * the purge off its resident memory climbed with each burst of ten parallel 20 MiB uploads
 * (+82 MiB after the first, +148 after twenty-four, against +78 to +100 with the purge on;
 * loadtest/README.md, twenty-third session), to the edge of its 150 MiB target. The deployment
 * manifests set the same for its container (the image itself has RUNTIME_ENV).
 */
export const PROCESS_RUNTIME_ENV: Partial<Record<ProcessName, Record<string, string>>> = {
  documents: { MIMALLOC_PURGE_DELAY: '10' },
};

/** The runtime environment of one process of the stack (RUNTIME_ENV and its own differences), or the common one. */
export function runtimeEnv(name?: ProcessName): Record<string, string> {
  return { ...RUNTIME_ENV, ...(name ? PROCESS_RUNTIME_ENV[name] : undefined) };
}

/** The environment of a process the stack starts: its runtime environment, then this process's, then `layers` in order. */
export function childEnv(
  runtime: Record<string, string>,
  ...layers: Record<string, string | undefined>[]
): Record<string, string | undefined> {
  return Object.assign({}, runtime, process.env, ...layers);
}

function binary(name: 'bun' | 'deno'): string {
  return join(repoRoot, 'node_modules', '.bin', name);
}

export interface ServiceProcess {
  name: ProcessName;
  url: string;
  /** The gateway's operations port (/metrics, /livez, /readyz), when it was given one. */
  opsUrl?: string;
  child: ChildProcess;
  /** Sends a signal and resolves with the exit code once the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Spawns one service (`services/<name>/src/main.ts`) under Bun or Deno, appending its output to a
 * log file. A gateway listens on `opsPort` for /metrics and probes, or on any free port when none
 * is given (so extra gateways never collide on the default 9090).
 */
export function spawnService(options: {
  name: ProcessName;
  port: number;
  /** The gateway's operations port. */
  opsPort?: number;
  env: Record<string, string>;
  runtime?: Runtime;
  logFile?: string;
  /** Also copy the service's output to this process's stdout. */
  echo?: boolean;
}): ServiceProcess {
  const { name, runtime = 'bun' } = options;
  const entry = join(repoRoot, 'services', name, 'src', 'main.ts');
  const args = runtime === 'deno' ? ['run', '-A', '--quiet', entry] : [entry];
  const ops = name === 'gateway' ? { GATEWAY_OPS_PORT: String(options.opsPort ?? 0) } : {};
  const child = spawn(binary(runtime), args, {
    cwd: repoRoot,
    env: childEnv(runtimeEnv(name), options.env, ops),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (options.logFile) {
    mkdirSync(dirname(options.logFile), { recursive: true });
    const out = createWriteStream(options.logFile, { flags: 'a' });
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
  }
  if (options.echo) {
    child.stdout?.pipe(process.stdout);
    child.stderr?.pipe(process.stderr);
  }
  if (!options.logFile && !options.echo) {
    child.stdout?.resume();
    child.stderr?.resume();
  }
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return {
    name,
    url: `http://127.0.0.1:${options.port}`,
    ...(name === 'gateway' && options.opsPort ? { opsUrl: `http://127.0.0.1:${options.opsPort}` } : {}),
    child,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      return exited;
    },
  };
}

/** Waits until `url/readyz` answers 200, failing early if the process exits. */
export async function waitReady(proc: ServiceProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null) throw new Error(`${proc.name} exited with code ${proc.child.exitCode} before it was ready`);
    try {
      const response = await fetch(`${proc.url}/readyz`, { signal: AbortSignal.timeout(1000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`${proc.name} was not ready within ${timeoutMs / 1000}s`);
}

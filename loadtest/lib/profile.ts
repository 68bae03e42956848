import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { services } from '@crm/contracts';
import { childEnv, freePort, type ProcessName, repoRoot, runtimeEnv, waitReady } from '@crm/stack';

/**
 * Starts one more replica of a process (`gateway` or a service) under `bun --cpu-prof-md` with the
 * stack's env on a port of its own, runs `load(url)` against it, stops it with SIGTERM (Bun writes
 * the profile on exit) and returns the profile's path.
 */
export async function profileProcess(
  name: ProcessName | 'floor',
  env: Record<string, string>,
  dir: string,
  load: (url: string) => Promise<unknown>,
): Promise<string | undefined> {
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const bun = join(repoRoot, 'node_modules', '.bin', 'bun');
  const entry = name === 'floor' ? join(repoRoot, 'loadtest', 'floor-server.ts') : join(repoRoot, 'services', name, 'src', 'main.ts');
  // GATEWAY_OPS_PORT=0: its own operations port, never a collision with the stack's gateway.
  const ports =
    name === 'floor'
      ? { FLOOR_PORT: String(port) }
      : name === 'gateway'
        ? { GATEWAY_PORT: String(port), GATEWAY_OPS_PORT: '0' }
        : { [services[name].portEnv]: String(port) };
  const child = spawn(bun, ['--cpu-prof-md', `--cpu-prof-dir=${dir}`, entry], {
    cwd: repoRoot,
    env: childEnv(runtimeEnv(name === 'floor' ? undefined : name), env, ports),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const proc = { name: name === 'floor' ? ('sales' as const) : name, url: `http://127.0.0.1:${port}`, child, stop: async () => null };
  await waitReady(proc);
  await load(proc.url);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.md')) : [];
  return files[0] ? join(dir, files[0]) : undefined;
}

/** A gateway replica profiled under `load` (see profileProcess). */
export function profileGateway(env: Record<string, string>, dir: string, load: (url: string) => Promise<unknown>) {
  return profileProcess('gateway', env, dir, load);
}

/** The first `lines` lines of the profile's self-time table (the hot spots). */
export function profileHead(path: string, lines = 40): string {
  return readFileSync(path, 'utf8').split('\n').slice(0, lines).join('\n');
}

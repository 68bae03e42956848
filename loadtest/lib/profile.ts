import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, repoRoot, waitReady } from '@crm/stack';

/**
 * Starts one more gateway under `bun --cpu-prof-md` with the stack's env, runs `load(url)` against
 * it, stops it with SIGTERM (Bun writes the profile on exit) and returns the profile's path.
 */
export async function profileGateway(
  env: Record<string, string>,
  dir: string,
  load: (url: string) => Promise<unknown>,
): Promise<string | undefined> {
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const bun = join(repoRoot, 'node_modules', '.bin', 'bun');
  const entry = join(repoRoot, 'services', 'gateway', 'src', 'main.ts');
  const child = spawn(bun, ['--cpu-prof-md', `--cpu-prof-dir=${dir}`, entry], {
    cwd: repoRoot,
    // GATEWAY_OPS_PORT=0: its own operations port, never a collision with the stack's gateway.
    env: { ...process.env, ...env, GATEWAY_PORT: String(port), GATEWAY_OPS_PORT: '0' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const proc = { name: 'gateway' as const, url: `http://127.0.0.1:${port}`, child, stop: async () => null };
  await waitReady(proc);
  await load(proc.url);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.md')) : [];
  return files[0] ? join(dir, files[0]) : undefined;
}

/** The first `lines` lines of the profile's self-time table (the hot spots). */
export function profileHead(path: string, lines = 40): string {
  return readFileSync(path, 'utf8').split('\n').slice(0, lines).join('\n');
}

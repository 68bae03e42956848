import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Go-built tools, pinned. Bump a version here and the next run builds it once more. */
export const goTools = {
  minio: { module: 'github.com/minio/minio', version: 'v0.0.0-20260212201848-7aac2a2c5b7c' },
  k6: { module: 'go.k6.io/k6', version: 'v1.8.1' },
} as const;

/** Where built tools are cached, outside the repository. */
export function toolCacheDir(): string {
  return process.env.CRM_TOOL_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'crm-api', 'bin');
}

/**
 * The path of a pinned Go tool, built with `go install module@version` into the cache on
 * first use and reused afterwards.
 */
export function ensureGoTool(name: keyof typeof goTools, log: (msg: string) => void = console.log): string {
  const { module, version } = goTools[name];
  const dir = join(toolCacheDir(), `${name}-${version}`);
  const binary = join(dir, name);
  if (existsSync(binary)) return binary;
  mkdirSync(dir, { recursive: true });
  log(`building ${module}@${version} with go install (first run only, takes a few minutes)…`);
  const result = spawnSync('go', ['install', `${module}@${version}`], {
    env: { ...process.env, GOBIN: dir, CGO_ENABLED: '0', GOFLAGS: `${process.env.GOFLAGS ?? ''} -trimpath`.trim() },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0 || !existsSync(binary)) {
    throw new Error(
      `go install ${module}@${version} failed (is Go installed?): ${result.error ?? ''} ${String(result.stderr).slice(-2000)}`,
    );
  }
  return binary;
}

// Closed-loop load with wrk (Debian's package, C + LuaJIT, one thread): light enough that the
// generator does not starve what it measures on a 2-core machine, unlike k6 (Go + a JS VM per VU).
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '@crm/stack';
import { debianBinary } from './apt.ts';

/** The figures of one closed-loop run: requests/s, latency percentiles (ms), failed share. */
export interface LoadFigures {
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  failed: number;
  requests: number;
}

/** One request shape: a GET, or a POST with a JSON body and a fresh Idempotency-Key per request. */
export interface RequestShape {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** Give every request its own Idempotency-Key starting with this prefix. */
  keyPrefix?: string;
}

/** The wrk binary; installs Debian's package with apt-get when it is missing. */
export function wrkBinary(log: (m: string) => void): string {
  return debianBinary('wrk', ['/usr/bin/wrk'], log);
}

interface WrkJson {
  requests: number;
  duration_us: number;
  errors: Record<'connect' | 'read' | 'write' | 'status' | 'timeout', number>;
  latency_us: Record<'p50' | 'p90' | 'p99' | 'max', number>;
}

/** Runs wrk against one shape for `seconds` with `connections` kept busy; resolves once wrk has exited. */
export async function runWrk(
  shape: RequestShape,
  options: { seconds: number; connections: number; threads?: number },
): Promise<LoadFigures> {
  const args = [
    `-t${options.threads ?? 1}`,
    `-c${options.connections}`,
    `-d${options.seconds}s`,
    '-s',
    join(repoRoot, 'loadtest', 'wrk', 'bench.lua'),
  ];
  for (const [name, value] of Object.entries(shape.headers)) args.push('-H', `${name}: ${value}`);
  args.push(shape.url);
  const env = { ...process.env, WRK_METHOD: shape.method, WRK_BODY: shape.body ?? '', WRK_KEY_PREFIX: shape.keyPrefix ?? '' };
  const child = spawn(wrkBinary(console.log), args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk) => {
    out += chunk;
  });
  const code = await new Promise<number>((resolve) => child.once('exit', (c) => resolve(c ?? 1)));
  const line = out.split('\n').find((l) => l.startsWith('WRK_JSON '));
  if (code !== 0 || !line) throw new Error(`wrk exited with ${code}: ${out.slice(-500)}`);
  const r = JSON.parse(line.slice('WRK_JSON '.length)) as WrkJson;
  const failed = r.errors.connect + r.errors.read + r.errors.write + r.errors.status + r.errors.timeout;
  return {
    rps: r.requests / (r.duration_us / 1e6),
    p50: r.latency_us.p50 / 1000,
    p90: r.latency_us.p90 / 1000,
    p99: r.latency_us.p99 / 1000,
    failed: r.requests > 0 ? failed / r.requests : 1,
    requests: r.requests,
  };
}

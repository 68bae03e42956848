import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '@crm/stack';
import { type K6Run, runK6 } from './k6.ts';
import type { LoadFigures, RequestShape } from './wrk.ts';

/** min / median / max of a figure over the rounds. */
export interface Spread {
  min: number;
  median: number;
  max: number;
}

/** The spread of a list of values (median of an even count: the mean of the middle two). */
export function spread(values: number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { min: sorted[0] ?? Number.NaN, median, max: sorted[sorted.length - 1] ?? Number.NaN };
}

/** A ratio between two cases, taken round by round (both measured back to back in each round). */
export interface RatioCheck {
  name: string;
  over: string;
  under: string;
  /** The median must be at least this; undefined: printed for reference only. */
  atLeast?: number;
}

/** One line of the verdict: a ratio's spread or a single value, and whether its target holds. */
export interface Verdict {
  name: string;
  value: Spread | number;
  ok: boolean;
  /** Reference figures have no target and are not counted. */
  reference: boolean;
}

/** Judges a ratio check on the median of its per-round ratios. */
export function judgeRatio(check: RatioCheck, rounds: Record<string, LoadFigures>[]): Verdict {
  const ratios = rounds.map((r) => (r[check.over]?.rps ?? Number.NaN) / (r[check.under]?.rps ?? Number.NaN));
  const value = spread(ratios);
  const reference = check.atLeast === undefined;
  return { name: check.name, value, reference, ok: reference || value.median >= (check.atLeast as number) };
}

/** One printed verdict line: `ok  `/`MISS`/`ref ` name, then min / median / max or the value. */
export function verdictLine(v: Verdict): string {
  const f = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : '-');
  const value = typeof v.value === 'number' ? f(v.value) : `${f(v.value.min)} / ${f(v.value.median)} / ${f(v.value.max)}`;
  return `${v.reference ? 'ref ' : v.ok ? 'ok  ' : 'MISS'} ${v.name.padEnd(44)} ${value}`;
}

/** The closing line: `N ok, M miss` over the verdicts that have a target. */
export function tally(verdicts: Verdict[]): string {
  const judged = verdicts.filter((v) => !v.reference);
  return `${judged.filter((v) => v.ok).length} ok, ${judged.filter((v) => !v.ok).length} miss`;
}

/** Reads rps and p50/p90/p99 from a k6 bench run's summary. */
export function k6Figures(run: K6Run): LoadFigures {
  const m = run.summary?.metrics ?? {};
  const d = m.http_req_duration?.values ?? {};
  return {
    rps: m.http_reqs?.values.rate ?? 0,
    p50: d.med ?? Number.NaN,
    p90: d['p(90)'] ?? Number.NaN,
    p99: d['p(99)'] ?? Number.NaN,
    failed: m.http_req_failed?.values.rate ?? 1,
    requests: m.http_reqs?.values.count ?? 0,
  };
}

/** Runs `loadtest/k6/bench.js` open-loop: `rate` requests per second of one GET shape. */
export function k6AtRate(shape: RequestShape, options: { vus: number; duration: string; rate: number; name: string }): Promise<K6Run> {
  return runK6({
    script: 'bench',
    name: options.name,
    quiet: true,
    env: {
      TARGET_URL: shape.url,
      METHOD: shape.method,
      HEADERS: JSON.stringify(shape.headers),
      VUS: String(options.vus),
      DURATION: options.duration,
      MODE: 'rate',
      RATE: String(options.rate),
    },
  });
}

/**
 * `rate` GETs per second of one shape for `seconds`, open loop, from `loadtest/open-loop.ts` in a
 * Bun process of its own (the half-peak case: k6 took ~18 % of the 2 cores at 1 300 req/s).
 */
export async function openLoopAtRate(shape: RequestShape, options: { seconds: number; rate: number }): Promise<LoadFigures> {
  const child = spawn(join(repoRoot, 'node_modules', '.bin', 'bun'), [join(repoRoot, 'loadtest', 'open-loop.ts')], {
    cwd: repoRoot,
    env: {
      ...process.env,
      TARGET_URL: shape.url,
      HEADERS: JSON.stringify(shape.headers),
      RATE: String(options.rate),
      SECONDS: String(options.seconds),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk) => {
    out += chunk;
  });
  const code = await new Promise<number>((resolve) => child.once('exit', (c) => resolve(c ?? 1)));
  const line = out.trim().split('\n').at(-1) ?? '';
  if (code !== 0 || !line.startsWith('{')) throw new Error(`open-loop generator exited with ${code}: ${out.slice(-300)}`);
  return JSON.parse(line) as LoadFigures;
}

import { type K6Run, runK6 } from './k6.ts';

/** One measured configuration of the benchmark. */
export interface BenchCase {
  key: string;
  label: string;
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
}

/** The figures of one bench run: requests per second and latency percentiles (ms). */
export interface BenchFigures {
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  failed: number;
  requests: number;
}

/** Reads rps and p50/p90/p99 from a bench run's summary. */
export function benchFigures(run: K6Run): BenchFigures {
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

/** Runs `loadtest/k6/bench.js` for one case: closed-loop peak, or open-loop at `rate` per second. */
export function benchRun(c: BenchCase, options: { vus: number; duration: string; rate?: number; name?: string }): Promise<K6Run> {
  return runK6({
    script: 'bench',
    name: options.name ?? `bench-${c.key}`,
    quiet: true,
    env: {
      TARGET_URL: c.url,
      METHOD: c.method,
      HEADERS: JSON.stringify(c.headers),
      VUS: String(options.vus),
      DURATION: options.duration,
      ...(options.rate ? { MODE: 'rate', RATE: String(options.rate) } : { MODE: 'peak' }),
    },
  });
}

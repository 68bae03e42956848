import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureGoTool, repoRoot } from '@crm/stack';

/** Where every run's JSON summary and HTML report go (git-ignored). */
export const resultsDir = join(repoRoot, 'loadtest', 'results');

/** k6's end-of-test data as written by `loadtest/k6/lib/summary.js`. */
export interface K6Summary {
  metrics: Record<
    string,
    { type: string; contains?: string; values: Record<string, number>; thresholds?: Record<string, { ok: boolean }> }
  >;
  state?: { testRunDurationMs: number };
  verdicts: { name: string; ok: boolean; detail: string }[];
}

export interface K6Run {
  name: string;
  exitCode: number;
  summary?: K6Summary;
  summaryFile: string;
  htmlFile: string;
}

/** The pinned k6 binary (built once with `go install go.k6.io/k6@<version>` into the tool cache). */
export function k6Binary(): string {
  return ensureGoTool('k6', (m) => console.log(`[k6] ${m}`));
}

/** A timestamp for file names: 2026-11-21T10-00-00. */
export function stamp(date = new Date()): string {
  return date.toISOString().slice(0, 19).replace(/:/g, '-');
}

/**
 * Runs one k6 script (`loadtest/k6/<script>.js`) with the given env, writing
 * `<name>-<stamp>.json` (summary) and `.html` (k6 web dashboard report) under results/.
 */
export async function runK6(options: { script: string; name?: string; env: Record<string, string>; quiet?: boolean }): Promise<K6Run> {
  const name = options.name ?? options.script;
  mkdirSync(resultsDir, { recursive: true });
  const base = join(resultsDir, `${name}-${stamp()}`);
  const summaryFile = `${base}.json`;
  const htmlFile = `${base}.html`;
  const script = join(repoRoot, 'loadtest', 'k6', `${options.script}.js`);
  const args = ['run', '--quiet', '--no-usage-report', '--summary-trend-stats=avg,min,med,max,p(90),p(95),p(99)', script];
  const env = {
    ...process.env,
    ...options.env,
    SUMMARY_JSON: summaryFile,
    K6_WEB_DASHBOARD: 'true',
    K6_WEB_DASHBOARD_PORT: '-1',
    K6_WEB_DASHBOARD_EXPORT: htmlFile,
    // A short period so that short runs (smoke) still get a report.
    K6_WEB_DASHBOARD_PERIOD: '1s',
    K6_NO_COLOR: 'true',
  };
  const child = spawn(k6Binary(), args, { cwd: repoRoot, env, stdio: ['ignore', options.quiet ? 'ignore' : 'inherit', 'inherit'] });
  const stop = () => child.kill('SIGINT');
  process.once('SIGINT', stop);
  const exitCode = await new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
  process.off('SIGINT', stop);
  const summary = existsSync(summaryFile) ? (JSON.parse(readFileSync(summaryFile, 'utf8')) as K6Summary) : undefined;
  return { name, exitCode, summary, summaryFile, htmlFile };
}

import type { K6Run, K6Summary } from './k6.ts';

const num = (v: number | undefined, digits = 1) => (v === undefined || Number.isNaN(v) ? '-' : v.toFixed(digits));

/** The main figures of a k6 run: requests, rate, failures, latency percentiles, checks, thresholds. */
export function figures(summary: K6Summary | undefined) {
  const m = summary?.metrics ?? {};
  const duration = m['http_req_duration{phase:main}']?.values ?? m.http_req_duration?.values ?? {};
  // `max>=0` thresholds only make k6 report a sub-metric (per endpoint); they are not targets.
  const thresholds = Object.values(m).flatMap((metric) =>
    Object.entries(metric.thresholds ?? {})
      .filter(([expr]) => expr !== 'max>=0')
      .map(([, t]) => t),
  );
  return {
    requests: m.http_reqs?.values.count ?? 0,
    rps: m.http_reqs?.values.rate ?? 0,
    failedPct: (m.http_req_failed?.values.rate ?? 0) * 100,
    p50: duration.med,
    p95: duration['p(95)'],
    p99: duration['p(99)'],
    checksPassed: m.checks?.values.passes ?? 0,
    checksTotal: (m.checks?.values.passes ?? 0) + (m.checks?.values.fails ?? 0),
    thresholdsOk: thresholds.filter((t) => t.ok).length,
    thresholdsTotal: thresholds.length,
  };
}

/** Whether a run passed: k6 exited 0, every threshold held and every verdict is ok. */
export function passed(run: K6Run): boolean {
  return run.exitCode === 0 && run.summary !== undefined && run.summary.verdicts.every((v) => v.ok);
}

/** Prints a one-screen table of the runs, their verdicts and where the reports are. */
export function printTable(runs: K6Run[], log: (line: string) => void = console.log): void {
  const header = ['scenario', 'result', 'reqs', 'req/s', 'failed', 'p50 ms', 'p95 ms', 'p99 ms', 'checks', 'thresholds'];
  const rows = runs.map((run) => {
    const f = figures(run.summary);
    return [
      run.name,
      passed(run) ? 'PASS' : 'FAIL',
      String(f.requests),
      num(f.rps),
      `${num(f.failedPct, 2)}%`,
      num(f.p50),
      num(f.p95),
      num(f.p99),
      `${f.checksPassed}/${f.checksTotal}`,
      `${f.thresholdsOk}/${f.thresholdsTotal}`,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  log('');
  log(line(header));
  log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of rows) log(line(row));
  for (const run of runs) {
    for (const v of run.summary?.verdicts ?? []) log(`  ${run.name}: ${v.ok ? 'ok  ' : 'FAIL'} ${v.name} — ${v.detail}`);
    const failing = Object.entries(run.summary?.metrics ?? {}).flatMap(([metric, data]) =>
      Object.entries(data.thresholds ?? {})
        .filter(([, t]) => !t.ok)
        .map(([expr]) => `${metric} ${expr}`),
    );
    if (failing.length > 0) log(`  ${run.name}: thresholds crossed: ${failing.join(', ')}`);
    if (!run.summary) log(`  ${run.name}: no summary written (k6 exit code ${run.exitCode})`);
  }
  log('');
  for (const run of runs) log(`  ${run.name}: ${run.summaryFile.replace(/.*loadtest\//, 'loadtest/')} (+ .html report)`);
}

// Shared handleSummary: writes k6's full end-of-test data as JSON to $SUMMARY_JSON (the
// orchestrator prints the table from it), plus any `verdicts` a scenario computes from it.
/** Builds the handleSummary of a scenario; `verdicts(data)` returns [{ name, ok, detail }]. */
export function summaryWriter(verdicts) {
  return (data) => {
    const out = { ...data, verdicts: verdicts ? verdicts(data) : [] };
    const path = __ENV.SUMMARY_JSON;
    const lines = out.verdicts.map((v) => `${v.ok ? 'PASS' : 'FAIL'} ${v.name}: ${v.detail}`).join('\n');
    return path ? { [path]: JSON.stringify(out, null, 1), stdout: lines ? `${lines}\n` : '' } : { stdout: JSON.stringify(out) };
  };
}

/** The value of `metric.values[field]`, or 0 when the metric never received a sample. */
export function metricValue(data, metric, field = 'count') {
  return data.metrics[metric]?.values?.[field] ?? 0;
}

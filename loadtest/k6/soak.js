// soak: the crud-mix operations at a steady, moderate arrival rate for SOAK_DURATION (bounded,
// 3 minutes by default); nothing may fail and latency must not drift (second half vs first).
import exec from 'k6/execution';
import { Trend } from 'k6/metrics';
import { tenants } from './lib/api.js';
import { mixIteration, perEndpoint } from './lib/mix.js';
import { seedTenant } from './lib/seed.js';
import { metricValue, summaryWriter } from './lib/summary.js';

/** Operation latency in the first and the second half of the run, to see drift. */
const early = new Trend('soak_early_op', true);
const late = new Trend('soak_late_op', true);

export const options = {
  setupTimeout: '120s',
  scenarios: {
    soak: {
      executor: 'constant-arrival-rate',
      rate: Number(__ENV.RPS || 40),
      timeUnit: '1s',
      duration: __ENV.SOAK_DURATION || '3m',
      preAllocatedVUs: 20,
      maxVUs: 100,
      gracefulStop: '30s',
    },
  },
  thresholds: {
    ...perEndpoint,
    op_failed: [`rate<${__ENV.MAX_FAILED || '0.001'}`],
    dropped_iterations: ['count<10'],
    'http_req_duration{phase:main}': [`p(95)<${__ENV.P95_MS || 300}`, `p(99)<${__ENV.P99_MS || 1000}`],
  },
};

export function setup() {
  return tenants().map((t) => seedTenant(t, Number(__ENV.SEED_CONTACTS || 50)));
}

export default function soak(seeds) {
  const started = Date.now();
  mixIteration(seeds[Math.floor(Math.random() * seeds.length)]);
  (exec.scenario.progress < 0.5 ? early : late).add(Date.now() - started);
}

/** No drift: p95 of the second half at most twice (or 50 ms above) the first half's. */
export const handleSummary = summaryWriter((data) => {
  const first = metricValue(data, 'soak_early_op', 'p(95)');
  const second = metricValue(data, 'soak_late_op', 'p(95)');
  return [
    {
      name: 'latency drift',
      ok: second <= Math.max(2 * first, first + 50),
      detail: `operation p95 ${first.toFixed(1)} ms in the first half, ${second.toFixed(1)} ms in the second`,
    },
  ];
});

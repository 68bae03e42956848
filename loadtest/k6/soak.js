// soak: the crud-mix operations at a steady, moderate arrival rate for SOAK_DURATION (bounded,
// 3 minutes by default); latency must not drift and nothing may fail.
import { tenants } from './lib/api.js';
import { mixIteration } from './lib/mix.js';
import { seedTenant } from './lib/seed.js';
import { summaryWriter } from './lib/summary.js';

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
    op_failed: [`rate<${__ENV.MAX_FAILED || '0.001'}`],
    dropped_iterations: ['count<10'],
    'http_req_duration{phase:main}': [`p(95)<${__ENV.P95_MS || 300}`, `p(99)<${__ENV.P99_MS || 1000}`],
  },
};

export function setup() {
  return tenants().map((t) => seedTenant(t, Number(__ENV.SEED_CONTACTS || 50)));
}

export default function soak(seeds) {
  mixIteration(seeds[Math.floor(Math.random() * seeds.length)]);
}

export const handleSummary = summaryWriter();

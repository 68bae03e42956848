// spike: the crud-mix operations at an arrival rate that jumps from BASE_RPS to PEAK_RPS within
// a few seconds, holds, and drops back; the service must absorb it without errors.
import { tenants } from './lib/api.js';
import { mixIteration, perEndpoint } from './lib/mix.js';
import { seedTenant } from './lib/seed.js';
import { summaryWriter } from './lib/summary.js';

const base = Number(__ENV.BASE_RPS || 10);
const peak = Number(__ENV.PEAK_RPS || 150);
const hold = __ENV.HOLD || '20s';

export const options = {
  setupTimeout: '120s',
  scenarios: {
    spike: {
      executor: 'ramping-arrival-rate',
      startRate: base,
      timeUnit: '1s',
      preAllocatedVUs: 50,
      maxVUs: Number(__ENV.MAX_VUS || 300),
      stages: [
        { target: base, duration: '10s' },
        { target: peak, duration: '5s' },
        { target: peak, duration: hold },
        { target: base, duration: '5s' },
        { target: base, duration: '10s' },
      ],
      gracefulStop: '30s',
    },
  },
  thresholds: {
    ...perEndpoint,
    op_failed: [`rate<${__ENV.MAX_FAILED || '0.01'}`],
    dropped_iterations: [`count<${__ENV.MAX_DROPPED || Math.ceil(peak * 2)}`],
    'http_req_duration{phase:main}': [`p(99)<${__ENV.P99_MS || 3000}`],
  },
};

export function setup() {
  return tenants().map((t) => seedTenant(t, Number(__ENV.SEED_CONTACTS || 50)));
}

export default function spike(seeds) {
  mixIteration(seeds[Math.floor(Math.random() * seeds.length)]);
}

export const handleSummary = summaryWriter();

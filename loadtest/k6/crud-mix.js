// crud-mix: a realistic mix (list/read contacts, create contacts and orders with idempotency
// keys, small uploads) from VUS virtual users over DURATION, spread over the provisioned tenants.
import { tenants } from './lib/api.js';
import { mixIteration, perEndpoint } from './lib/mix.js';
import { seedTenant } from './lib/seed.js';
import { metricValue, summaryWriter } from './lib/summary.js';

const vus = Number(__ENV.VUS || 16);
const maxFailed = __ENV.MAX_FAILED || '0.01';

export const options = {
  setupTimeout: '120s',
  scenarios: {
    crud_mix: { executor: 'constant-vus', vus, duration: __ENV.DURATION || '60s', gracefulStop: '30s' },
  },
  thresholds: {
    ...perEndpoint,
    op_failed: [`rate<${maxFailed}`],
    checks: [`rate>${1 - Number(maxFailed)}`],
    'http_req_duration{phase:main}': [`p(95)<${__ENV.P95_MS || 800}`, `p(99)<${__ENV.P99_MS || 2000}`],
    'http_req_duration{name:GET /v1/contacts/{id}}': [`p(95)<${__ENV.READ_P95_MS || 400}`],
  },
};

export function setup() {
  return tenants().map((t) => seedTenant(t, Number(__ENV.SEED_CONTACTS || 50)));
}

export default function crudMix(seeds) {
  mixIteration(seeds[(__VU - 1) % seeds.length]);
}

export const handleSummary = summaryWriter((data) => [
  {
    name: 'accepted writes',
    ok: true,
    detail: ['contacts', 'orders', 'documents'].map((k) => `${k}=${metricValue(data, `accepted_${k}`)}`).join(' '),
  },
]);

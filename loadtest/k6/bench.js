// bench: one request shape against one target, either closed-loop at full speed (MODE=peak:
// VUS virtual users for DURATION, what you read is the peak rate) or open-loop at a fixed arrival
// rate (MODE=rate, RATE per second, what you read is the latency at that rate).
import { check } from 'k6';
import http from 'k6/http';

const url = __ENV.TARGET_URL;
const method = __ENV.METHOD || 'GET';
const headers = JSON.parse(__ENV.HEADERS || '{}');
const duration = __ENV.DURATION || '20s';

export const options = {
  discardResponseBodies: true,
  scenarios: {
    bench:
      __ENV.MODE === 'rate'
        ? {
            executor: 'constant-arrival-rate',
            rate: Number(__ENV.RATE),
            timeUnit: '1s',
            duration,
            preAllocatedVUs: Number(__ENV.VUS || 16),
            maxVUs: Number(__ENV.VUS || 16) * 4,
          }
        : { executor: 'constant-vus', vus: Number(__ENV.VUS || 16), duration },
  },
  thresholds: { checks: ['rate>0.999'] },
};

let n = 0;

export default function bench() {
  const h = { ...headers };
  let body = null;
  if (method === 'POST') {
    n += 1;
    const id = `${__VU}-${n}-${Date.now().toString(36)}`;
    h['idempotency-key'] = `bench-${id}`;
    h['content-type'] = 'application/json';
    body = JSON.stringify({ name: `Bench ${id}`, type: 'client', email: `bench-${id}@example.test` });
  }
  const r = http.request(method, url, body, { headers: h });
  check(r, { 'status 2xx': (x) => x.status >= 200 && x.status < 300 });
}

export function handleSummary(data) {
  return __ENV.SUMMARY_JSON ? { [__ENV.SUMMARY_JSON]: JSON.stringify({ ...data, verdicts: [] }) } : {};
}

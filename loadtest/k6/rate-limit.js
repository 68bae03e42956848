// rate-limit: tenants on the default limits (30 writes, 120 reads per minute) each get a burst
// of twice their budget in reads and in writes, while another tenant keeps the gateway busy with
// the crud-mix. Exactly the allowed count must pass: the budget itself, plus what the limiter may
// have refilled while the burst lasted (1 request per full 60/limit seconds of burst span). Every 429 carries Retry-After and RateLimit.
import { check } from 'k6';
import exec from 'k6/execution';
import { Counter, Trend } from 'k6/metrics';
import { call, contactBody, tenants, uid } from './lib/api.js';
import { mixIteration } from './lib/mix.js';
import { seedTenant } from './lib/seed.js';
import { metricValue, summaryWriter } from './lib/summary.js';

const [busy, ...limited] = tenants();
if (limited.length === 0) throw new Error('rate-limit needs a busy tenant and at least one tenant on default limits');
const factor = Number(__ENV.BURST_FACTOR || 2);
const counters = limited.map((_, i) => ({
  writeOk: new Counter(`rl_write_ok_${i}`),
  write429: new Counter(`rl_write_429_${i}`),
  readOk: new Counter(`rl_read_ok_${i}`),
  read429: new Counter(`rl_read_429_${i}`),
  other: new Counter(`rl_other_${i}`),
  writeAt: new Trend(`rl_write_at_${i}`),
  readAt: new Trend(`rl_read_at_${i}`),
}));
const writes = limited.reduce((n, t) => n + t.limits.write_per_minute * factor, 0);
const reads = limited.reduce((n, t) => n + t.limits.read_per_minute * factor, 0);

export const options = {
  setupTimeout: '120s',
  scenarios: {
    background: { executor: 'constant-vus', vus: 4, duration: __ENV.BACKGROUND || '15s', exec: 'background' },
    writes: { executor: 'shared-iterations', vus: 20, iterations: writes, exec: 'write', startTime: '3s', maxDuration: '60s' },
    reads: { executor: 'shared-iterations', vus: 20, iterations: reads, exec: 'read', startTime: '3s', maxDuration: '60s' },
    unauthenticated: { executor: 'shared-iterations', vus: 2, iterations: 20, exec: 'unauthenticated', startTime: '3s' },
  },
  thresholds: { 'checks{kind:limit}': ['rate==1'] },
};

export function setup() {
  return seedTenant(busy, 20);
}

export function background(seed) {
  mixIteration(seed);
}

/** Spreads the burst's iterations round-robin over the limited tenants. */
function slot() {
  const i = exec.scenario.iterationInTest % limited.length;
  return { i, tenant: limited[i], c: counters[i] };
}

/** Counts the answer; `at` gets the request's start and end, so min..max spans the whole burst. */
function record(r, started, ok, tooMany, at) {
  at.add(started);
  at.add(Date.now());
  if (r.status === 200 || r.status === 201) ok.add(1);
  else if (r.status === 429) tooMany.add(1);
  check(
    r,
    {
      'answer is 2xx or 429': (x) => x.status === 200 || x.status === 201 || x.status === 429,
      'RateLimit and RateLimit-Policy headers': (x) => Boolean(x.headers.Ratelimit && x.headers['Ratelimit-Policy']),
      '429 carries Retry-After and rate_limited': (x) =>
        x.status !== 429 || (Number(x.headers['Retry-After']) > 0 && String(x.body).includes('rate_limited')),
    },
    { kind: 'limit' },
  );
}

export function write() {
  const { i, tenant, c } = slot();
  const started = Date.now();
  const r = call(tenant.api_key, 'POST', '/v1/contacts', { body: contactBody(`rl-${i}-${uid()}`), name: 'POST /v1/contacts (limited)' });
  if (r.status !== 201 && r.status !== 429) c.other.add(1);
  record(r, started, c.writeOk, c.write429, c.writeAt);
}

export function read() {
  const { tenant, c } = slot();
  const started = Date.now();
  const r = call(tenant.api_key, 'GET', '/v1/contacts?per_page=1', { name: 'GET /v1/contacts (limited)' });
  if (r.status !== 200 && r.status !== 429) c.other.add(1);
  record(r, started, c.readOk, c.read429, c.readAt);
}

export function unauthenticated() {
  const r = call(`crm_${'x'.repeat(43)}`, 'GET', '/v1/contacts', { name: 'GET /v1/contacts (bad key)' });
  check(r, { 'bad key → 401 (or IP-limited 429)': (x) => x.status === 401 || x.status === 429 }, { kind: 'limit' });
}

/**
 * Bounds of the accepted count: the budget, plus what a limiter may refill while the burst lasts
 * (span = first request sent → last answer received; one request per full 60/limit s).
 */
function verdict(data, name, i, limit, kind) {
  const ok = metricValue(data, `rl_${kind}_ok_${i}`);
  const rejected = metricValue(data, `rl_${kind}_429_${i}`);
  const span = metricValue(data, `rl_${kind}_at_${i}`, 'max') - metricValue(data, `rl_${kind}_at_${i}`, 'min');
  const refill = Math.floor(span / (60000 / limit));
  const pass = ok >= limit && ok <= limit + refill && metricValue(data, `rl_other_${i}`) === 0;
  const allowed = refill === 0 ? `exactly ${limit}` : `${limit}..${limit + refill}`;
  return { name: `${name} ${kind}s`, ok: pass, detail: `${ok} passed, ${rejected} got 429 (allowed ${allowed}; burst span ${span} ms)` };
}

export const handleSummary = summaryWriter((data) =>
  limited.flatMap((t, i) => [
    verdict(data, `tenant ${i}`, i, t.limits.write_per_minute, 'write'),
    verdict(data, `tenant ${i}`, i, t.limits.read_per_minute, 'read'),
  ]),
);

// An open-loop generator for `npm run bench`'s half-peak case: RATE GETs per second of TARGET_URL
// (headers from HEADERS, JSON) for SECONDS, started on schedule whatever the answers take. Latency
// is counted from each request's scheduled start, so a stall of the target (or of this process)
// shows in the tail instead of silently lowering the rate (no coordinated omission). A Bun process
// of its own: it costs a fraction of k6's CPU at the same rate. Prints one JSON line.
const url = process.env.TARGET_URL as string;
const headers = JSON.parse(process.env.HEADERS ?? '{}') as Record<string, string>;
const rate = Number(process.env.RATE);
const seconds = Number(process.env.SECONDS ?? 15);

const latencies: number[] = [];
let failed = 0;
const inFlight = new Set<Promise<void>>();

async function one(scheduled: number): Promise<void> {
  try {
    const response = await fetch(url, { headers });
    await response.arrayBuffer();
    if (response.status >= 400) failed += 1;
  } catch {
    failed += 1;
  }
  latencies.push(performance.now() - scheduled);
}

const start = performance.now();
const total = Math.floor(rate * seconds);
let sent = 0;
while (sent < total) {
  const now = performance.now();
  // Everything due by now goes out in this turn; then wait for the next due time.
  while (sent < total && start + (sent * 1000) / rate <= now) {
    const p = one(start + (sent * 1000) / rate);
    inFlight.add(p);
    p.finally(() => inFlight.delete(p));
    sent += 1;
  }
  const next = start + (sent * 1000) / rate - performance.now();
  await new Promise((r) => setTimeout(r, Math.max(0, next)));
}
await Promise.all(inFlight);
const elapsed = (performance.now() - start) / 1000;
latencies.sort((a, b) => a - b);
const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)] ?? Number.NaN;
console.log(
  JSON.stringify({
    requests: latencies.length,
    rps: latencies.length / elapsed,
    p50: at(50),
    p90: at(90),
    p99: at(99),
    failed: failed / Math.max(1, latencies.length),
  }),
);
process.exit(0);

export {};

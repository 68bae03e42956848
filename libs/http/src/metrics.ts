const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface Series {
  count: number;
  sum: number;
  buckets: number[];
}

const extraCounters = new Map<string, { help: string; read: () => number }>();

/** Adds a process-wide counter (read when /metrics is scraped) to every HttpMetrics exposition. */
export function registerCounter(name: string, help: string, read: () => number): void {
  extraCounters.set(name, { help, read });
}

/** Prometheus metrics for HTTP traffic: a request counter and a latency histogram by route and status. */
export class HttpMetrics {
  private readonly series = new Map<string, Series>();

  constructor(private readonly service: string) {}

  /** Records one finished request. */
  observe(method: string, route: string, status: number, seconds: number): void {
    // Route labels are route patterns; the escape is only needed (and only paid for) when one holds a quote.
    const label = route.includes('"') ? route.replace(/"/g, '\\"') : route;
    const key = `method="${method}",route="${label}",status="${status}"`;
    let s = this.series.get(key);
    if (!s) {
      s = { count: 0, sum: 0, buckets: BUCKETS.map(() => 0) };
      this.series.set(key, s);
    }
    s.count += 1;
    s.sum += seconds;
    for (let i = 0; i < BUCKETS.length; i++) if (seconds <= (BUCKETS[i] as number)) s.buckets[i] = (s.buckets[i] as number) + 1;
  }

  /** Prometheus text exposition format (version 0.0.4). */
  render(): string {
    const svc = `service="${this.service}"`;
    const lines = ['# HELP http_requests_total HTTP requests handled, by route and status.', '# TYPE http_requests_total counter'];
    for (const [labels, s] of this.series) lines.push(`http_requests_total{${svc},${labels}} ${s.count}`);
    lines.push('# HELP http_request_duration_seconds HTTP request latency.', '# TYPE http_request_duration_seconds histogram');
    for (const [labels, s] of this.series) {
      for (const [i, b] of BUCKETS.entries())
        lines.push(`http_request_duration_seconds_bucket{${svc},${labels},le="${b}"} ${s.buckets[i]}`);
      lines.push(`http_request_duration_seconds_bucket{${svc},${labels},le="+Inf"} ${s.count}`);
      lines.push(`http_request_duration_seconds_sum{${svc},${labels}} ${s.sum}`);
      lines.push(`http_request_duration_seconds_count{${svc},${labels}} ${s.count}`);
    }
    for (const [name, counter] of extraCounters)
      lines.push(`# HELP ${name} ${counter.help}`, `# TYPE ${name} counter`, `${name}{${svc}} ${counter.read()}`);
    const mem = process.memoryUsage();
    lines.push('# TYPE process_resident_memory_bytes gauge', `process_resident_memory_bytes{${svc}} ${mem.rss}`);
    return `${lines.join('\n')}\n`;
  }
}

/** One received webhook delivery. */
export interface Received {
  id: string;
  type: string;
  /** The request path, so one receiver can serve several webhooks (`/hooks/<label>`). */
  path: string;
  at: number;
}

/**
 * A loopback HTTP endpoint that records webhook deliveries (by `webhook-id`) and answers 204,
 * so the load tests can check that every event arrived, and how many arrived more than once.
 */
export function startWebhookReceiver() {
  const received: Received[] = [];
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const body = await request.text();
      let type = 'unknown';
      try {
        type = (JSON.parse(body) as { type?: string }).type ?? type;
      } catch {
        // not JSON: still counted under its webhook-id
      }
      received.push({ id: request.headers.get('webhook-id') ?? '', type, path: new URL(request.url).pathname, at: Date.now() });
      return new Response(null, { status: 204 });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/hooks`,
    received,
    /** Distinct event ids received, and how many deliveries repeated an id already seen. */
    tally(filter: (r: Received) => boolean = () => true) {
      const ids = new Map<string, number>();
      for (const r of received.filter(filter)) ids.set(r.id, (ids.get(r.id) ?? 0) + 1);
      const duplicates = [...ids.values()].reduce((n, c) => n + c - 1, 0);
      return { distinct: ids.size, duplicates, total: received.filter(filter).length };
    },
    stop: () => server.stop(true),
  };
}

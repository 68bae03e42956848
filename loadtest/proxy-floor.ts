// The runtime's floor for a gateway, a reference case of `npm run bench`: the runtime's own HTTP
// server and its fetch, forwarding every request to sales with the internal headers and handing
// back sales' answer as it came — no key, rate limit, request id, idempotency, audit, logs or
// metrics. What the gateway costs above this is its policies; what this costs above going
// direct is the runtime's proxying. Env: UPSTREAM_URL, PROXY_PORT, PROXY_HEADERS (JSON).
const upstream = process.env.UPSTREAM_URL as string;
const extra = Object.entries(JSON.parse(process.env.PROXY_HEADERS ?? '{}') as Record<string, string>);

async function handle(request: Request): Promise<Response> {
  const url = request.url;
  const path = url.slice(url.indexOf('/', url.indexOf('//') + 2));
  if (path === '/readyz' || path === '/livez') return new Response('ok');
  const headers = new Headers(request.headers);
  headers.delete('host');
  headers.delete('connection');
  for (const [name, value] of extra) headers.set(name, value);
  return fetch(upstream + path, { method: request.method, headers, body: request.body, redirect: 'manual' });
}

const g = globalThis as any;
const port = Number(process.env.PROXY_PORT);
if (g.Bun) g.Bun.serve({ port, hostname: '127.0.0.1', fetch: handle });
else g.Deno.serve({ port, hostname: '127.0.0.1', onListen() {} }, handle);
process.on('SIGTERM', () => process.exit(0));

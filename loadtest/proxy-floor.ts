// The runtime's floor for a gateway, a reference case of `npm run bench`: the runtime's own HTTP
// server forwarding every request to sales with the internal headers, through the same upstream
// client as the gateway's reads (its own HTTP/1.1 client on Bun, `fetch` on Deno), and handing back
// sales' answer as it came — no key, rate limit, request id, idempotency, audit, logs or metrics.
// What the gateway costs above this is its policies; what this costs above going direct is the
// runtime's proxying. Env: UPSTREAM_URL, PROXY_PORT, PROXY_HEADERS (JSON), PROXY_CLIENT (`fetch`
// to use fetch on Bun too).
import { http1Client } from '@crm/runtime';

const upstream = process.env.UPSTREAM_URL as string;
const extra = Object.entries(JSON.parse(process.env.PROXY_HEADERS ?? '{}') as Record<string, string>);
const client = process.env.PROXY_CLIENT === 'fetch' ? undefined : http1Client(upstream);

async function handle(request: Request): Promise<Response> {
  const url = request.url;
  const path = url.slice(url.indexOf('/', url.indexOf('//') + 2));
  if (path === '/readyz' || path === '/livez') return new Response('ok');
  const method = request.method;
  if (client && (method === 'GET' || method === 'HEAD')) {
    const headers: [string, string][] = [...extra];
    request.headers.forEach((value, name) => {
      if (name !== 'host' && name !== 'connection') headers.push([name, value]);
    });
    return client.request({ method, path, headers });
  }
  const headers = new Headers(request.headers);
  headers.delete('host');
  headers.delete('connection');
  for (const [name, value] of extra) headers.set(name, value);
  return fetch(upstream + path, { method, headers, body: request.body, redirect: 'manual' });
}

const g = globalThis as any;
const port = Number(process.env.PROXY_PORT);
if (g.Bun) g.Bun.serve({ port, hostname: '127.0.0.1', fetch: handle });
else g.Deno.serve({ port, hostname: '127.0.0.1', onListen() {} }, handle);
process.on('SIGTERM', () => process.exit(0));

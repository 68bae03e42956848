import http from 'node:http';

/** What the proxy does with the gateway's answer to one request. */
export type Loss =
  /** Hand the answer on unchanged. */
  | 'pass'
  /** Drop the answer and say 503 instead, like a load balancer whose upstream connection broke after the write. */
  | 'answer-503'
  /** Drop the answer and the connection: the client sees a network error. */
  | 'reset';

/**
 * A loopback proxy in front of the gateway that forwards every request, always, and then loses the
 * answer as `plan(n)` says for the n-th request (0-based). So a write really happens on the server
 * while the client sees a failure: what a retry with the same Idempotency-Key must survive.
 */
export async function startLossyProxy(target: string, plan: (index: number, method: string) => Loss) {
  let count = 0;
  const seen: { method: string; url: string; idempotencyKey: string | null; status: number; loss: Loss }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const loss = plan(count++, req.method ?? 'GET');
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (value === undefined || ['host', 'connection', 'content-length', 'transfer-encoding'].includes(name)) continue;
        headers.set(name, Array.isArray(value) ? value.join(', ') : value);
      }
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      const upstream = await fetch(target + req.url, { method: req.method, headers, body, redirect: 'manual' });
      const bytes = Buffer.from(await upstream.arrayBuffer());
      const key = req.headers['idempotency-key'];
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        idempotencyKey: typeof key === 'string' ? key : null,
        status: upstream.status,
        loss,
      });
      if (loss === 'reset') return req.socket.destroy();
      if (loss === 'answer-503') {
        res.writeHead(503, { 'content-type': 'text/html' });
        return res.end('<html><body>503 Service Temporarily Unavailable</body></html>');
      }
      const out: Record<string, string> = {};
      upstream.headers.forEach((value, name) => {
        if (!['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(name)) out[name] = value;
      });
      res.writeHead(upstream.status, out);
      res.end(bytes);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    /** Every request forwarded: what the gateway answered and what the client got instead. */
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

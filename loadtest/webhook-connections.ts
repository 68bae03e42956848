// `npx bun loadtest/webhook-connections.ts`: what a connection per webhook costs against a kept-alive
// one. POSTs a webhook-sized JSON body with node:http (the webhooks service's client) to a local
// node:http receiver in the same process, ROUNDS × REQUESTS each way with CONCURRENCY in flight,
// alternating `agent: false` (a new connection per request, the sender before 1.2.4) and a
// keep-alive agent (the sender since). Prints requests per second, CPU µs per request (sender and
// receiver together: both run here) and the connections the receiver accepted.
import http from 'node:http';

const ROUNDS = Number(process.env.ROUNDS ?? 2);
const REQUESTS = Number(process.env.REQUESTS ?? 3000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 4);

let connections = 0;
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  });
});
server.on('connection', () => connections++);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
const body = JSON.stringify({
  id: 'evt_01JDX5',
  type: 'contact.created',
  timestamp: new Date().toISOString(),
  data: { name: 'x'.repeat(400) },
});
const keepAlive = new http.Agent({ keepAlive: true, timeout: 4000 });

const post = (agent: http.Agent | false) =>
  new Promise<void>((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } },
      (res) => {
        res.resume();
        res.on('end', resolve);
      },
    );
    req.on('error', reject);
    req.end(body);
  });

for (let round = 1; round <= ROUNDS; round++) {
  for (const [label, agent] of [
    ['connection per request', false],
    ['kept alive', keepAlive],
  ] as const) {
    const accepted = connections;
    const cpu = process.cpuUsage();
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next++ < REQUESTS) await post(agent);
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    console.log(
      `round ${round} ${label.padEnd(22)} ${Math.round(REQUESTS / seconds)} req/s, ${Math.round((used.user + used.system) / REQUESTS)} µs CPU per request, ${connections - accepted} connections`,
    );
  }
}
keepAlive.destroy();
server.close();

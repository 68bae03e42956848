import { afterEach, expect, test } from 'bun:test';
import http from 'node:http';
import net from 'node:net';
import { createTargetPolicy } from '../ssrf/target-guard.ts';
import { sendWebhook } from './http-sender.ts';

// The sender's own connection handling against real local servers (loopback allowed for the test).
const targetPolicy = createTargetPolicy({ WEBHOOK_ALLOWED_NETS: '127.0.0.0/8', WEBHOOK_TEST_HOSTS_FILE: '', NODE_ENV: 'test' });
const servers: net.Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

async function listen(server: net.Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

const send = (port: number, path = '/hook') =>
  sendWebhook({
    url: `http://127.0.0.1:${port}${path}`,
    headers: { 'content-type': 'application/json' },
    body: '{"id":"evt_1"}',
    timeoutMs: 5000,
    targetPolicy,
  });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('attempts to one receiver, one after another, share one kept-alive connection', async () => {
  let connections = 0;
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      bodies.push(body);
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  server.on('connection', () => connections++);
  const port = await listen(server);
  for (let i = 0; i < 3; i++) {
    expect(await send(port)).toMatchObject({ statusCode: 200, excerpt: 'ok', error: null });
    await pause(10);
  }
  expect(bodies).toEqual(['{"id":"evt_1"}', '{"id":"evt_1"}', '{"id":"evt_1"}']);
  expect(connections).toBe(1);
});

test('a kept-alive connection the receiver closed as the next request came: sent again once on a new connection', async () => {
  // Answers the first request of each connection and drops the connection when a second one arrives.
  let connections = 0;
  let answered = 0;
  const server = net.createServer((socket) => {
    connections++;
    let requests = 0;
    let buffered = '';
    socket.on('error', () => {});
    socket.on('data', (data) => {
      buffered += data.toString('latin1');
      if (!buffered.includes('{"id":"evt_1"}')) return;
      buffered = '';
      requests++;
      if (requests > 1) return void socket.destroy();
      answered++;
      socket.write('HTTP/1.1 204 No Content\r\nconnection: keep-alive\r\n\r\n');
    });
  });
  const port = await listen(server);
  expect(await send(port)).toMatchObject({ statusCode: 204, error: null });
  await pause(10);
  expect(await send(port)).toMatchObject({ statusCode: 204, error: null });
  expect({ connections, answered }).toEqual({ connections: 2, answered: 2 });
});

test('an answer longer than the excerpt is cut at 2 KB and its connection closed, not reused', async () => {
  let connections = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('x'.repeat(64 * 1024));
    });
  });
  server.on('connection', () => connections++);
  const port = await listen(server);
  const first = await send(port);
  expect(first.statusCode).toBe(500);
  expect(first.excerpt).toBe('x'.repeat(2048));
  await pause(10);
  expect(await send(port)).toMatchObject({ statusCode: 500 });
  expect(connections).toBe(2);
});

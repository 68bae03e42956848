// The gateway's own HTTP/1.1 upstream client against real servers on loopback: Bun.serve for ordinary
// answers, and a raw TCP server (Bun.listen) that writes exactly the bytes a case needs (chunks
// split across packets, a body ended by closing, a kept-alive connection closed under a request).
import { afterAll, afterEach, describe, expect, test } from 'bun:test';
import { http1Client } from './http1-client.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const decoder = new TextDecoder();

/** A raw server: `reply(requestHead, socket, n)` answers the n-th request of a connection (from 1). */
function rawServer(reply: (head: string, socket: any, n: number) => void) {
  const state = { connections: 0, open: 0, maxOpen: 0, heads: [] as string[] };
  const server = Bun.listen<{ buf: string; n: number }>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(socket) {
        socket.data = { buf: '', n: 0 };
        state.connections += 1;
        state.open += 1;
        state.maxOpen = Math.max(state.maxOpen, state.open);
      },
      data(socket, chunk) {
        socket.data.buf += decoder.decode(chunk);
        for (let end = socket.data.buf.indexOf('\r\n\r\n'); end >= 0; end = socket.data.buf.indexOf('\r\n\r\n')) {
          const head = socket.data.buf.slice(0, end);
          socket.data.buf = socket.data.buf.slice(end + 4);
          socket.data.n += 1;
          state.heads.push(head);
          reply(head, socket, socket.data.n);
        }
      },
      close() {
        state.open -= 1;
      },
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, state, stop: () => server.stop(true) };
}

const ok = (body: string, extra = '') =>
  `HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: ${body.length}\r\n${extra}\r\n${body}`;

const servers: { stop(): void }[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.stop();
});

/** A raw server that answers the first request of each connection ('first') and closes it at the second (an idle timeout firing just then). */
function closingSecondRequests() {
  const server = rawServer((_head, socket, n) => {
    if (n === 1) socket.write(ok('first'));
    else socket.end();
  });
  servers.push(server);
  return server;
}

describe('http1Client', () => {
  const app = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      if (url.pathname === '/json') return Response.json({ seen: Object.fromEntries(request.headers), query: url.search });
      if (url.pathname === '/echo') {
        const text = await request.text();
        return Response.json(
          { method: request.method, length: request.headers.get('content-length'), type: request.headers.get('content-type'), text },
          { status: 201 },
        );
      }
      if (url.pathname === '/empty') return new Response(null, { status: 204 });
      if (url.pathname === '/not-modified') return new Response(null, { status: 304, headers: { etag: '"x"' } });
      if (url.pathname === '/big') return new Response('x'.repeat(1024 * 1024), { headers: { 'content-type': 'text/plain' } });
      if (url.pathname === '/slow') {
        await sleep(Number(url.searchParams.get('ms') ?? 50));
        return new Response('slow');
      }
      return new Response('not found', { status: 404, headers: { 'x-error-type': 'not_found' } });
    },
  });
  afterAll(() => app.stop(true));
  const origin = `http://127.0.0.1:${app.port}`;

  test('a GET gets status, headers and body; the connection is reused for the next request', async () => {
    const client = http1Client(origin);
    if (!client) throw new Error('Bun has Bun.connect');
    const first = await client.request({ method: 'GET', path: '/json?a=1&b=%20', headers: [['x-tenant-id', 't1']] });
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toContain('application/json');
    const body = (await first.json()) as { seen: Record<string, string>; query: string };
    expect(body.query).toBe('?a=1&b=%20');
    expect(body.seen['x-tenant-id']).toBe('t1');
    expect(body.seen.host).toBe(`127.0.0.1:${app.port}`);
    const second = await client.request({ method: 'GET', path: '/nope', headers: [] });
    expect(second.status).toBe(404);
    expect(second.headers.get('x-error-type')).toBe('not_found');
    expect(await second.text()).toBe('not found');
    expect(client.stats()).toMatchObject({ opened: 1, idle: 1 });
    client.close();
  });

  test('HEAD keeps the Content-Length and has no body; 204 and 304 have none either', async () => {
    const client = http1Client(origin)!;
    const head = await client.request({ method: 'HEAD', path: '/big', headers: [] });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(1024 * 1024));
    expect(head.body).toBeNull();
    const empty = await client.request({ method: 'GET', path: '/empty', headers: [] });
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
    const notModified = await client.request({ method: 'GET', path: '/not-modified', headers: [] });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get('etag')).toBe('"x"');
    // Three answers without a body, one connection: none of them left bytes behind.
    expect(client.stats()).toMatchObject({ opened: 1, idle: 1 });
    client.close();
  });

  test('a body larger than one packet streams whole, then the connection is reused', async () => {
    const client = http1Client(origin)!;
    const big = await client.request({ method: 'GET', path: '/big', headers: [] });
    const text = await big.text();
    expect(text.length).toBe(1024 * 1024);
    expect(text).toBe('x'.repeat(1024 * 1024));
    expect((await client.request({ method: 'GET', path: '/json', headers: [] })).status).toBe(200);
    expect(client.stats().opened).toBe(1);
    client.close();
  });

  test('chunked answers split anywhere across packets decode whole; trailers are skipped', async () => {
    const server = rawServer((_head, socket) => {
      const parts = [
        'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-type: text/plain\r\n\r\n5\r\nhel',
        'lo\r\n',
        '6;ext=1\r\n world\r',
        '\n0\r\nx-trailer: 1\r\n',
        '\r\n',
      ];
      void (async () => {
        for (const part of parts) {
          socket.write(part);
          await sleep(15);
        }
      })();
    });
    servers.push(server);
    const client = http1Client(server.url)!;
    const response = await client.request({ method: 'GET', path: '/', headers: [] });
    expect(response.headers.get('transfer-encoding')).toBeNull();
    expect(await response.text()).toBe('hello world');
    const again = await client.request({ method: 'GET', path: '/', headers: [] });
    expect(await again.text()).toBe('hello world');
    expect(server.state.connections).toBe(1);
    client.close();
  });

  test('a body ended by closing the connection is whole, and that connection is not reused', async () => {
    const server = rawServer((_head, socket) => {
      socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nuntil ');
      setTimeout(() => socket.end('the end'), 20);
    });
    servers.push(server);
    const client = http1Client(server.url)!;
    expect(await (await client.request({ method: 'GET', path: '/', headers: [] })).text()).toBe('until the end');
    expect(await (await client.request({ method: 'GET', path: '/', headers: [] })).text()).toBe('until the end');
    expect(server.state.connections).toBe(2);
    expect(client.stats().idle).toBe(0);
  });

  test('Connection: close from the server: the next request opens a new connection', async () => {
    const server = rawServer((_head, socket) => {
      socket.write(ok('bye', 'connection: close\r\n'));
      socket.end();
    });
    servers.push(server);
    const client = http1Client(server.url)!;
    for (let i = 0; i < 3; i += 1) expect(await (await client.request({ method: 'GET', path: '/', headers: [] })).text()).toBe('bye');
    expect(server.state.connections).toBe(3);
  });

  test('a kept-alive connection the server closes under a request: sent once more on a new one', async () => {
    const server = closingSecondRequests();
    const client = http1Client(server.url)!;
    expect(await (await client.request({ method: 'GET', path: '/', headers: [] })).text()).toBe('first');
    expect(await (await client.request({ method: 'GET', path: '/', headers: [] })).text()).toBe('first');
    expect(server.state.connections).toBe(2);
    // A new connection that closes without answering is not retried: the request fails.
    const never = rawServer((_head, socket) => socket.end());
    servers.push(never);
    const other = http1Client(never.url)!;
    await expect(other.request({ method: 'GET', path: '/', headers: [] })).rejects.toThrow();
    expect(never.state.connections).toBe(1);
  });

  test('a write sends its whole body with its Content-Length (UTF-8 bytes); the connection is reused', async () => {
    const client = http1Client(origin)!;
    const text = JSON.stringify({ name: 'Ñandú Ltd — €', n: 1 });
    for (const method of ['POST', 'PUT', 'PATCH'] as const) {
      const answer = await client.request({ method, path: '/echo', headers: [['content-type', 'application/json']], body: text });
      expect(answer.status).toBe(201);
      expect(await answer.json()).toEqual({ method, length: String(Buffer.byteLength(text)), type: 'application/json', text });
    }
    // A DELETE without a body sends no Content-Length; an empty body sends 0.
    const bare = await client.request({ method: 'DELETE', path: '/echo', headers: [] });
    expect(await bare.json()).toEqual({ method: 'DELETE', length: null, type: null, text: '' });
    const empty = await client.request({ method: 'POST', path: '/echo', headers: [], body: '' });
    expect(await empty.json()).toMatchObject({ method: 'POST', length: '0', text: '' });
    // A 1 MiB body larger than a socket buffer goes whole too.
    const large = 'y'.repeat(1024 * 1024);
    const big = await client.request({ method: 'POST', path: '/echo', headers: [], body: large });
    expect(((await big.json()) as { text: string }).text).toBe(large);
    expect(client.stats()).toMatchObject({ requests: 6, opened: 1, idle: 1 });
    client.close();
  });

  test('a write on a kept-alive connection the server closes under it is sent once more only when repeatable', async () => {
    const server = closingSecondRequests();
    const client = http1Client(server.url)!;
    const write = { method: 'POST', path: '/', headers: [] as [string, string][], body: '{}' } as const;
    expect(await (await client.request(write)).text()).toBe('first');
    // Not marked repeatable: the server may have acted on it, so it fails and is not sent again.
    await expect(client.request(write)).rejects.toThrow();
    expect(server.state.connections).toBe(1);
    expect(await (await client.request(write)).text()).toBe('first');
    // Repeatable (a keyed write the service records): once more, on a fresh connection.
    expect(await (await client.request({ ...write, repeatable: true })).text()).toBe('first');
    expect(server.state.connections).toBe(3);
  });

  test('an abort before the answer rejects with the reason and closes that connection', async () => {
    const client = http1Client(origin)!;
    const controller = new AbortController();
    const pending = client.request({ method: 'GET', path: '/slow?ms=300', headers: [], signal: controller.signal });
    setTimeout(() => controller.abort(new Error('deadline')), 30);
    await expect(pending).rejects.toThrow('deadline');
    expect(client.stats()).toMatchObject({ open: 0, idle: 0 });
    // The client still works.
    expect((await client.request({ method: 'GET', path: '/json', headers: [] })).status).toBe(200);
    client.close();
  });

  test('at most maxConnections are open; further requests wait their turn and all succeed', async () => {
    const client = http1Client(origin, { maxConnections: 2 })!;
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: 6 }, () => client.request({ method: 'GET', path: '/slow?ms=60', headers: [] })));
    for (const answer of answers) expect(await answer.text()).toBe('slow');
    expect(client.stats().opened).toBe(2);
    // Six 60 ms answers over two connections: three rounds.
    expect(performance.now() - started).toBeGreaterThanOrEqual(170);
    client.close();
  });

  test('a request waiting for a connection can be aborted', async () => {
    const client = http1Client(origin, { maxConnections: 1 })!;
    const busy = client.request({ method: 'GET', path: '/slow?ms=150', headers: [] });
    const controller = new AbortController();
    const waiting = client.request({ method: 'GET', path: '/json', headers: [], signal: controller.signal });
    await sleep(20);
    expect(client.stats().waiting).toBe(1);
    controller.abort(new Error('gave up'));
    await expect(waiting).rejects.toThrow('gave up');
    expect(client.stats().waiting).toBe(0);
    expect(await (await busy).text()).toBe('slow');
    client.close();
  });

  test('malformed or oversized answers fail the request; CR or LF in a header is refused before sending', async () => {
    const garbage = rawServer((_head, socket) => socket.write('SMTP ready\r\n\r\n'));
    const huge = rawServer((_head, socket) => socket.write(`HTTP/1.1 200 OK\r\nx-big: ${'a'.repeat(70 * 1024)}\r\n\r\n`));
    const badLength = rawServer((_head, socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n'));
    servers.push(garbage, huge, badLength);
    for (const server of [garbage, huge, badLength]) {
      await expect(http1Client(server.url)!.request({ method: 'GET', path: '/', headers: [] })).rejects.toThrow();
    }
    const quiet = rawServer((_head, socket) => socket.write(ok('x')));
    servers.push(quiet);
    const client = http1Client(quiet.url)!;
    await expect(client.request({ method: 'GET', path: '/', headers: [['x-a', 'b\r\nx-injected: 1']] })).rejects.toThrow(TypeError);
    await expect(client.request({ method: 'GET', path: '/ HTTP/1.1\r\nx: y', headers: [] })).rejects.toThrow(TypeError);
    expect(quiet.state.heads).toEqual([]);
  });

  test('a refused connection rejects', async () => {
    const server = rawServer(() => {});
    const url = server.url;
    server.stop();
    await expect(http1Client(url)!.request({ method: 'GET', path: '/', headers: [] })).rejects.toThrow();
  });

  test('not for https origins or other runtimes (undefined: callers use fetch)', () => {
    expect(http1Client('https://127.0.0.1:9')).toBeUndefined();
  });
});

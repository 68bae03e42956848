/**
 * A keep-alive HTTP/1.1 client over the runtime's own TCP sockets (`Bun.connect`), for the
 * gateway's small requests to the project's services (reads, and writes with a JSON body at hand).
 * On this project's reads it costs 20–30 µs of CPU less per request than Bun's `fetch`
 * (loadtest/README.md, "Gateway upstream client"), which a gateway spends on every read it
 * forwards, and about as much less on a keyed write. It does what that needs and no more:
 *
 * - `http:` origins; GET and HEAD, and writes whose whole body is at hand (a string, sent with
 *   its Content-Length in the same write as the head). The answer's body is framed by its
 *   Content-Length, by chunked encoding, or by the end of the connection; 1xx heads are skipped.
 * - `request` resolves at the answer's head, like `fetch`; the body follows as a stream, or as
 *   bytes when it came with the head (the common case for a JSON answer).
 * - Connections are reused (last idle first); at most `maxConnections` are open (further requests
 *   wait for one, in order) and at most `maxIdle` kept idle; one the server closes is dropped when
 *   it says so. A request sent on a reused connection that ends before any
 *   byte of its answer (the server closed it meanwhile) is sent once more on a new connection
 *   when it is safe to repeat: GET and HEAD, or a write its caller marks `repeatable`; any other
 *   write fails instead, since the server may have acted on it.
 * - Aborting the signal ends the exchange and its connection (before the head: the promise
 *   rejects with the signal's reason; after: the body stream errors).
 * - No receive backpressure (Bun's client sockets cannot pause reading): for answers of bounded
 *   size only. A head larger than 64 KiB, or a malformed one, fails the request.
 *
 * `http1Client` is undefined on runtimes without `Bun.connect` (Deno): callers use `fetch` there.
 */
import { Buffer } from 'node:buffer';

const g = globalThis as any;

export interface Http1Request {
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path and query, as sent on the request line (already percent-encoded). */
  path: string;
  /** Request headers (the client adds `host`, and `content-length` with a body); names and values without CR or LF. */
  headers: [string, string][];
  /** The whole body, sent with the head (bounded: a JSON body the caller has already read). */
  body?: string;
  /**
   * Whether the request may be sent twice: GET and HEAD always may; a write only when the caller
   * says so (one under an Idempotency-Key that the service records, whose second copy replays
   * the first). Only such a request is sent once more when a kept-alive connection closes
   * before any byte of its answer; any other fails.
   */
  repeatable?: boolean;
  signal?: AbortSignal;
}

export interface Http1Client {
  request(request: Http1Request): Promise<Response>;
  /** Requests taken and connections opened so far, connections open and idle now, requests waiting for one (for metrics and tests). */
  stats(): { requests: number; opened: number; open: number; idle: number; waiting: number };
  /** Closes the idle connections. */
  close(): void;
}

const MAX_HEAD_BYTES = 64 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n');
const CRLF = Buffer.from('\r\n');
/** Answer headers never passed on: the hop's own framing and connection handling. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding']);

type Framing = { kind: 'none' } | { kind: 'length'; left: number } | { kind: 'chunked' } | { kind: 'close' };

/** One request and its answer on one connection. */
interface Exchange {
  request: Http1Request;
  resolve: (response: Response) => void;
  reject: (error: unknown) => void;
  /** Whether any byte of the answer arrived (after that, no retry). */
  answered: boolean;
  /** Set once the head is parsed and the answer resolved with a stream. */
  stream?: ReadableStreamDefaultController<Uint8Array>;
  framing?: Framing;
  chunked?: ChunkedDecoder;
  /** The body when it all came with the head. */
  collected?: Uint8Array[];
  keepAlive: boolean;
  settled: boolean;
  onAbort?: () => void;
}

interface Waiter {
  take: (conn: Connection) => void;
  refuse: (error: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

/** Whether text would break the request's framing (a CR, LF or NUL). */
function unsafe(text: string): boolean {
  return text.includes('\n') || text.includes('\r') || text.includes('\0');
}

interface Connection {
  socket: any;
  exchange: Exchange | undefined;
  /** Bytes received and not yet consumed. */
  pending: Buffer | undefined;
  /** Bytes of the request not yet accepted by the socket. */
  unsent: Buffer | undefined;
  reused: boolean;
  closed: boolean;
}

/**
 * Chunked transfer coding, decoded incrementally: `push` returns the data bytes found and whether
 * the last chunk (and its trailers) ended.
 */
class ChunkedDecoder {
  #state: 'size' | 'data' | 'data-end' | 'trailer' | 'done' = 'size';
  #left = 0;
  #carry: Buffer | undefined;

  push(bytes: Buffer): { data: Uint8Array[]; done: boolean; rest: Buffer | undefined } {
    const buf = this.#carry ? Buffer.concat([this.#carry, bytes]) : bytes;
    this.#carry = undefined;
    const data: Uint8Array[] = [];
    let at = 0;
    while (at < buf.length && this.#state !== 'done') {
      if (this.#state === 'data') {
        const take = Math.min(this.#left, buf.length - at);
        data.push(buf.subarray(at, at + take));
        at += take;
        this.#left -= take;
        if (this.#left === 0) this.#state = 'data-end';
        continue;
      }
      const eol = buf.indexOf(CRLF, at);
      if (eol < 0) {
        if (buf.length - at > 4096) throw new Error('malformed chunked encoding (line too long)');
        break;
      }
      const line = buf.toString('latin1', at, eol);
      at = eol + 2;
      if (this.#state === 'data-end') {
        if (line !== '') throw new Error('malformed chunked encoding (no CRLF after a chunk)');
        this.#state = 'size';
      } else if (this.#state === 'size') {
        const hex = (line.split(';', 1)[0] as string).trim();
        if (!/^[0-9a-fA-F]{1,12}$/.test(hex)) throw new Error('malformed chunked encoding (chunk size)');
        this.#left = Number.parseInt(hex, 16);
        this.#state = this.#left === 0 ? 'trailer' : 'data';
      } else if (line === '') {
        this.#state = 'done';
      }
    }
    if (this.#state !== 'done' && at < buf.length) this.#carry = Buffer.from(buf.subarray(at));
    const rest = this.#state === 'done' && at < buf.length ? buf.subarray(at) : undefined;
    return { data, done: this.#state === 'done', rest };
  }
}

function parseHead(text: string): { status: number; statusText: string; headers: [string, string][]; fields: Map<string, string> } {
  const lines = text.split('\r\n');
  const statusLine = lines[0] as string;
  const match = /^HTTP\/1\.[01] (\d{3})(?: (.*))?$/.exec(statusLine);
  if (!match) throw new Error(`malformed status line: ${JSON.stringify(statusLine.slice(0, 80))}`);
  const headers: [string, string][] = [];
  const fields = new Map<string, string>();
  for (let i = 1; i < lines.length; i += 1) {
    const line = lines[i] as string;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error('malformed header line');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    fields.set(name, fields.has(name) ? `${fields.get(name)}, ${value}` : value);
    if (!HOP_BY_HOP.has(name)) headers.push([name, value]);
  }
  return { status: Number(match[1]), statusText: match[2] ?? '', headers, fields };
}

function framingOf(method: string, status: number, fields: Map<string, string>): Framing {
  if (method === 'HEAD' || status === 204 || status === 304) return { kind: 'none' };
  const coding = fields.get('transfer-encoding');
  if (coding !== undefined) {
    if (coding.toLowerCase().split(',').at(-1)?.trim() === 'chunked') return { kind: 'chunked' };
    return { kind: 'close' };
  }
  const length = fields.get('content-length');
  if (length !== undefined) {
    if (!/^\d{1,15}$/.test(length)) throw new Error('malformed content-length');
    const left = Number(length);
    return left === 0 ? { kind: 'none' } : { kind: 'length', left };
  }
  return { kind: 'close' };
}

/** Whether a request may be sent a second time (Http1Request.repeatable). */
function repeatable(request: Http1Request): boolean {
  return request.method === 'GET' || request.method === 'HEAD' || request.repeatable === true;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted.', 'AbortError');
}

/** A client for one `http:` origin; undefined where the runtime has no `Bun.connect`. */
export function http1Client(origin: string, options: { maxIdle?: number; maxConnections?: number } = {}): Http1Client | undefined {
  if (typeof g.Bun?.connect !== 'function') return undefined;
  const url = new URL(origin);
  if (url.protocol !== 'http:') return undefined;
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || 80);
  const hostHeader = `host: ${url.host}\r\n`;
  const maxIdle = options.maxIdle ?? 64;
  const maxConnections = options.maxConnections ?? 256;
  const idle: Connection[] = [];
  /** Connections open or being opened, and opened in all. */
  let open = 0;
  let opened = 0;
  /** Requests taken (a request sent once more counts once). */
  let requests = 0;
  /** Requests waiting for a connection (all `maxConnections` busy), first come first served. */
  const waiting: Waiter[] = [];

  function dropIdle(conn: Connection): void {
    const at = idle.indexOf(conn);
    if (at >= 0) idle.splice(at, 1);
  }

  /** Marks the connection closed (once): it leaves the pool and makes room for a waiting request. */
  function closed(conn: Connection): boolean {
    if (conn.closed) return false;
    conn.closed = true;
    dropIdle(conn);
    open -= 1;
    pump();
    return true;
  }

  function end(conn: Connection): void {
    if (closed(conn)) conn.socket?.terminate();
  }

  /** Opens connections for waiting requests while there is room. */
  function pump(): void {
    while (waiting.length > 0 && open < maxConnections) {
      const waiter = waiting.shift() as Waiter;
      if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
      open += 1;
      connect().then(waiter.take, (error) => {
        open -= 1;
        waiter.refuse(error);
      });
    }
  }

  /** Gives `take` a connection: an idle one, a new one, or the next one released. */
  function acquire(mayReuse: boolean, take: (conn: Connection) => void, refuse: (error: unknown) => void, signal?: AbortSignal): void {
    const reusable = mayReuse ? idle.pop() : undefined;
    if (reusable) {
      take(reusable);
      return;
    }
    if (open < maxConnections) {
      open += 1;
      connect().then(take, (error) => {
        open -= 1;
        pump();
        refuse(error);
      });
      return;
    }
    const waiter: Waiter = { take, refuse, signal };
    if (signal) {
      waiter.onAbort = () => {
        const at = waiting.indexOf(waiter);
        if (at >= 0) waiting.splice(at, 1);
        refuse(abortReason(signal));
      };
      signal.addEventListener('abort', waiter.onAbort, { once: true });
    }
    waiting.push(waiter);
  }

  /** The exchange ended cleanly: the connection serves a waiting request, goes back to the pool, or is closed. */
  function release(conn: Connection, exchange: Exchange): void {
    exchange.settled = true;
    if (exchange.onAbort) exchange.request.signal?.removeEventListener('abort', exchange.onAbort);
    conn.exchange = undefined;
    if (!exchange.keepAlive || conn.pending !== undefined || conn.closed) {
      end(conn);
      return;
    }
    conn.reused = true;
    const waiter = waiting.shift();
    if (waiter) {
      if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
      waiter.take(conn);
      return;
    }
    if (idle.length >= maxIdle) end(conn);
    else idle.push(conn);
  }

  /** The exchange failed: its promise rejects (or its stream errors) and the connection ends. */
  function fail(conn: Connection, exchange: Exchange, error: unknown): void {
    conn.exchange = undefined;
    end(conn);
    if (exchange.settled) return;
    exchange.settled = true;
    if (exchange.onAbort) exchange.request.signal?.removeEventListener('abort', exchange.onAbort);
    if (exchange.stream) {
      try {
        exchange.stream.error(error);
      } catch {
        // already closed or cancelled by the reader
      }
    } else {
      exchange.reject(error);
    }
  }

  function deliver(conn: Connection, exchange: Exchange, data: Uint8Array[], done: boolean): void {
    if (exchange.stream) {
      for (const bytes of data) if (bytes.length > 0) exchange.stream.enqueue(new Uint8Array(bytes));
      if (done) {
        try {
          exchange.stream.close();
        } catch {
          // the reader cancelled
        }
        release(conn, exchange);
      }
      return;
    }
    if (exchange.collected) exchange.collected.push(...data);
    else exchange.collected = data;
  }

  /** Consumes body bytes by the exchange's framing; true when the body ended. */
  function body(conn: Connection, exchange: Exchange, bytes: Buffer): boolean {
    const framing = exchange.framing as Framing;
    if (framing.kind === 'length') {
      const take = Math.min(framing.left, bytes.length);
      framing.left -= take;
      conn.pending = take < bytes.length ? Buffer.from(bytes.subarray(take)) : undefined;
      deliver(conn, exchange, [bytes.subarray(0, take)], framing.left === 0);
      return framing.left === 0;
    }
    if (framing.kind === 'chunked') {
      if (!exchange.chunked) exchange.chunked = new ChunkedDecoder();
      const decoder = exchange.chunked;
      const { data, done, rest } = decoder.push(bytes);
      conn.pending = rest ? Buffer.from(rest) : undefined;
      deliver(conn, exchange, data, done);
      return done;
    }
    // 'close': everything until the server ends the connection.
    deliver(conn, exchange, [bytes], false);
    return false;
  }

  function onData(conn: Connection, chunk: Buffer): void {
    const exchange = conn.exchange;
    if (!exchange || exchange.settled) {
      // Bytes nobody asked for (an answer after an abort, or a server talking out of turn).
      end(conn);
      return;
    }
    exchange.answered = true;
    if (exchange.framing) {
      // The head came earlier, so the body is a stream by now.
      body(conn, exchange, chunk);
      return;
    }
    let buf = conn.pending ? Buffer.concat([conn.pending, chunk]) : chunk;
    conn.pending = undefined;
    try {
      for (;;) {
        const headEnd = buf.indexOf(HEAD_END);
        if (headEnd > MAX_HEAD_BYTES || (headEnd < 0 && buf.length > MAX_HEAD_BYTES)) throw new Error('answer head larger than 64 KiB');
        if (headEnd < 0) {
          conn.pending = Buffer.from(buf);
          return;
        }
        const head = parseHead(buf.toString('latin1', 0, headEnd));
        buf = buf.subarray(headEnd + 4);
        if (head.status >= 100 && head.status < 200) continue; // 100 Continue and the like
        const connection = head.fields.get('connection')?.toLowerCase() ?? '';
        exchange.keepAlive = !connection.includes('close');
        exchange.framing = framingOf(exchange.request.method, head.status, head.fields);
        if (exchange.framing.kind === 'close') exchange.keepAlive = false;
        const init = { status: head.status, statusText: head.statusText, headers: head.headers };
        if (exchange.framing.kind === 'none') {
          conn.pending = buf.length > 0 ? Buffer.from(buf) : undefined;
          exchange.resolve(new Response(null, init));
          release(conn, exchange);
          return;
        }
        // The common case: the whole body came with the head.
        if (body(conn, exchange, buf)) {
          exchange.resolve(new Response(join(exchange.collected ?? []), init));
          release(conn, exchange);
          return;
        }
        const collected = exchange.collected ?? [];
        exchange.collected = undefined;
        const stream = new ReadableStream<Uint8Array>({
          start(controller) {
            exchange.stream = controller;
            for (const bytes of collected) if (bytes.length > 0) controller.enqueue(new Uint8Array(bytes));
          },
          cancel() {
            // The reader gave up on the body: the connection cannot be reused mid-answer.
            if (conn.exchange === exchange) fail(conn, exchange, new Error('answer body cancelled'));
          },
        });
        exchange.resolve(new Response(stream, init));
        return;
      }
    } catch (error) {
      fail(conn, exchange, error);
    }
  }

  function onClose(conn: Connection, error?: unknown): void {
    const wasClosed = !closed(conn);
    const exchange = conn.exchange;
    if (!exchange || exchange.settled) return;
    if (exchange.framing?.kind === 'close' && !wasClosed) {
      conn.exchange = undefined;
      exchange.settled = true;
      if (exchange.onAbort) exchange.request.signal?.removeEventListener('abort', exchange.onAbort);
      try {
        exchange.stream?.close();
      } catch {
        // the reader cancelled
      }
      return;
    }
    if (!exchange.answered && conn.reused && !exchange.request.signal?.aborted && repeatable(exchange.request)) {
      // A kept-alive connection the server closed just as the request went out: once more, fresh.
      conn.exchange = undefined;
      exchange.settled = true;
      if (exchange.onAbort) exchange.request.signal?.removeEventListener('abort', exchange.onAbort);
      send(exchange.request, false).then(exchange.resolve, exchange.reject);
      return;
    }
    fail(conn, exchange, error ?? new Error('connection closed before the answer ended'));
  }

  // A socket's handlers act only once its connect succeeded (`open`): a failed connect is the
  // connect promise's rejection alone.
  const handlers = {
    open(socket: any) {
      // Each request is one small write: never held back waiting for an acknowledgement (Nagle).
      socket.setNoDelay?.(true);
      (socket.data as Connection).socket = socket;
    },
    data(socket: any, chunk: Buffer) {
      onData(socket.data as Connection, chunk);
    },
    drain(socket: any) {
      const conn = socket.data as Connection;
      if (!conn.unsent) return;
      const written = socket.write(conn.unsent);
      conn.unsent = written < conn.unsent.length ? conn.unsent.subarray(written) : undefined;
    },
    end(socket: any) {
      const conn = socket.data as Connection;
      if (conn.socket) onClose(conn);
    },
    close(socket: any, error?: unknown) {
      const conn = socket.data as Connection;
      if (conn.socket) onClose(conn, error);
    },
    error(socket: any, error: unknown) {
      const conn = socket.data as Connection;
      if (conn.socket) onClose(conn, error);
    },
  };

  async function connect(): Promise<Connection> {
    const conn: Connection = {
      socket: undefined,
      exchange: undefined,
      pending: undefined,
      unsent: undefined,
      reused: false,
      closed: false,
    };
    opened += 1;
    conn.socket = await g.Bun.connect({ hostname, port, data: conn, socket: handlers });
    return conn;
  }

  function send(request: Http1Request, mayReuse: boolean): Promise<Response> {
    const signal = request.signal;
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    let head = `${request.method} ${request.path} HTTP/1.1\r\n${hostHeader}`;
    for (const [name, value] of request.headers) head += `${name}: ${value}\r\n`;
    const body = request.body === undefined ? undefined : Buffer.from(request.body, 'utf8');
    if (body) head += `content-length: ${body.length}\r\n`;
    head += '\r\n';
    return new Promise<Response>((resolve, reject) => {
      const exchange: Exchange = { request, resolve, reject, answered: false, keepAlive: true, settled: false };
      const start = (conn: Connection) => {
        if (signal?.aborted) {
          release(conn, exchange);
          reject(abortReason(signal));
          return;
        }
        if (conn.closed) {
          // Closed between its connect and this turn: the next one.
          acquire(false, start, reject, signal);
          return;
        }
        conn.exchange = exchange;
        if (signal) {
          exchange.onAbort = () => fail(conn, exchange, abortReason(signal));
          signal.addEventListener('abort', exchange.onAbort, { once: true });
        }
        const bytes = body ? Buffer.concat([Buffer.from(head, 'latin1'), body]) : Buffer.from(head, 'latin1');
        const written = conn.socket.write(bytes);
        if (written < bytes.length) conn.unsent = bytes.subarray(Math.max(0, written));
      };
      acquire(mayReuse, start, reject, signal);
    });
  }

  return {
    request(request) {
      if (unsafe(request.path) || request.headers.some(([name, value]) => unsafe(name) || unsafe(value)))
        return Promise.reject(new TypeError('CR, LF or NUL in the request line or a header'));
      requests += 1;
      return send(request, true);
    },
    stats: () => ({ requests, opened, open, idle: idle.length, waiting: waiting.length }),
    close() {
      for (const conn of idle.splice(0)) end(conn);
    },
  };
}

/** The body's parts as one copy (the socket's buffers are not kept). */
function join(parts: Uint8Array[]): Uint8Array<ArrayBuffer> | null {
  if (parts.length === 0) return null;
  if (parts.length === 1) return new Uint8Array(parts[0] as Uint8Array);
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * The only place that knows which JavaScript runtime we are on. Everything else in the
 * project uses web-standard and Node-compatible APIs; serving HTTP and listening for
 * signals differ between Bun and Deno, so they live here behind one small interface.
 */

type FetchHandler = (request: Request) => Response | Promise<Response>;

export interface ServeOptions {
  port: number;
  hostname?: string;
  /** PEM strings; when both are set the server speaks TLS. */
  tls?: { cert: string; key: string };
  /** Whether `clientAddress()` is needed for this server's requests (it costs a lookup per request). */
  clientAddresses?: boolean;
}

export interface RunningServer {
  port: number;
  /** Stops accepting connections and waits for in-flight requests to finish. */
  stop(): Promise<void>;
}

const g = globalThis as any;

/** Name of the runtime this process runs on. */
export const runtimeName: 'bun' | 'deno' | 'node' = g.Bun ? 'bun' : g.Deno ? 'deno' : 'node';

const clientAddresses = new WeakMap<Request, string>();

/** The remote address of the TCP peer that sent this request, when the runtime knows it (servers started with `clientAddresses`). */
export function clientAddress(request: Request): string | undefined {
  return clientAddresses.get(request);
}

/** Serves `fetch` on a port with the runtime's native HTTP server. */
export function serve(fetch: FetchHandler, options: ServeOptions): RunningServer {
  const hostname = options.hostname ?? '0.0.0.0';
  if (runtimeName === 'bun') {
    const server = g.Bun.serve({
      port: options.port,
      hostname,
      idleTimeout: 120,
      maxRequestBodySize: 64 * 1024 * 1024,
      ...(options.tls ? { tls: options.tls } : {}),
      fetch: options.clientAddresses
        ? (request: Request, srv: any) => {
            const ip = srv.requestIP(request)?.address;
            if (ip) clientAddresses.set(request, ip);
            return fetch(request);
          }
        : (request: Request) => fetch(request),
    });
    return { port: server.port, stop: () => server.stop(false) };
  }
  if (runtimeName === 'deno') {
    const server = g.Deno.serve(
      {
        port: options.port,
        hostname,
        onListen() {},
        ...(options.tls ? { cert: options.tls.cert, key: options.tls.key } : {}),
      },
      options.clientAddresses
        ? (request: Request, info: any) => {
            const ip = info?.remoteAddr?.hostname;
            if (ip) clientAddresses.set(request, ip);
            return fetch(request);
          }
        : (request: Request) => fetch(request),
    );
    return { port: server.addr.port, stop: () => server.shutdown() };
  }
  throw new Error('serve() needs Bun or Deno');
}

/** Runs `handler` once on SIGTERM or SIGINT, then exits with its result code (0 on success). */
export function onShutdown(handler: () => Promise<void>): void {
  let stopping = false;
  const run = async () => {
    if (stopping) return;
    stopping = true;
    const force = setTimeout(() => exit(1), 9_500);
    try {
      await handler();
      clearTimeout(force);
      exit(0);
    } catch (error) {
      console.error(JSON.stringify({ level: 'error', msg: 'shutdown failed', error: String(error) }));
      exit(1);
    }
  };
  if (runtimeName === 'deno') {
    g.Deno.addSignalListener('SIGTERM', run);
    g.Deno.addSignalListener('SIGINT', run);
  } else {
    process.on('SIGTERM', run);
    process.on('SIGINT', run);
  }
}

/** Ends the process with a code. */
export function exit(code: number): never {
  if (runtimeName === 'deno') g.Deno.exit(code);
  process.exit(code);
}
export { type Http1Client, type Http1Request, http1Client } from './http1-client.ts';

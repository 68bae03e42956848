import { AppError, headers as h } from '@crm/http';
import type { Http1Client, Http1Request } from '@crm/runtime';
import type { RequestBody } from './body.ts';

/** Request headers never passed on: hop-by-hop, the client's key, and what the gateway itself sets. */
const NOT_FORWARDED = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'content-type',
  'x-api-key',
  'x-forwarded-for',
  h.tenant,
  h.internalToken,
  h.requestId,
]);

/** Hop-by-hop headers of the upstream answer, which the gateway's own connection replaces. */
const UPSTREAM_HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding'];

export interface ForwardInput {
  request: Request;
  baseUrl: string;
  pathAndQuery: string;
  body: RequestBody;
  tenantId: string;
  requestId: string;
  internalToken: string;
  clientIp?: string;
  timeoutMs: number;
  /**
   * Given: receives the call's abort controller, so the caller can cancel it (a read sent ahead of
   * its grant, when the grant refuses it). One object per call, no listener.
   */
  cancel?: Cancellable;
  /**
   * The upstream's own HTTP/1.1 client, when given: a GET or HEAD, and a keyed write with a JSON
   * body or none, go through it; everything else (uploads, writes without a key) through fetch.
   */
  client?: Http1Client;
  /**
   * The request carries an Idempotency-Key, which the service records with its answer (contract
   * §21): sent twice, the second copy replays the first, so the client may send it once more on a
   * fresh connection when a kept-alive one closed before any byte of the answer.
   */
  keyed?: boolean;
}

/** Filled in by `forward` with what aborts its call. */
export interface Cancellable {
  controller?: AbortController;
}

/**
 * Upstream deadlines, swept by one interval timer instead of a timer per request: a request that
 * has no answer (headers) `timeoutMs` after it was sent is aborted on the next sweep, at most
 * SWEEP_MS late. The interval runs only while requests are waiting.
 */
const SWEEP_MS = 25;
interface Waiting {
  controller: AbortController;
  deadline: number;
}
const waiting = new Set<Waiting>();
let sweeper: ReturnType<typeof setInterval> | undefined;

function sweep(): void {
  if (waiting.size === 0) {
    clearInterval(sweeper);
    sweeper = undefined;
    return;
  }
  const now = performance.now();
  for (const entry of waiting) {
    if (entry.deadline > now) continue;
    waiting.delete(entry);
    entry.controller.abort();
  }
}

function awaitAnswer(timeoutMs: number): Waiting {
  const entry = { controller: new AbortController(), deadline: performance.now() + timeoutMs };
  waiting.add(entry);
  if (sweeper === undefined) {
    sweeper = setInterval(sweep, SWEEP_MS);
    // Never what keeps the process alive.
    (sweeper as { unref?: () => void }).unref?.();
  }
  return entry;
}

/**
 * Whether the runtime's fetched responses have mutable headers (Bun: yes; Deno: immutable, so the
 * answer is copied once). Learnt from the first answer.
 */
let fetchedHeadersMutable: boolean | undefined;

/** The upstream answer with its hop-by-hop headers removed and the request id set. */
function relay(upstream: Response, requestId: string): Response {
  if (fetchedHeadersMutable !== false) {
    try {
      const headers = upstream.headers;
      for (const name of UPSTREAM_HOP_BY_HOP) if (headers.has(name)) headers.delete(name);
      headers.set(h.requestId, requestId);
      fetchedHeadersMutable = true;
      return upstream;
    } catch (error) {
      if (fetchedHeadersMutable === true) throw error;
      fetchedHeadersMutable = false;
    }
  }
  const headers = new Headers(upstream.headers);
  for (const name of UPSTREAM_HOP_BY_HOP) headers.delete(name);
  headers.set(h.requestId, requestId);
  return new Response(upstream.body, { status: upstream.status, statusText: upstream.statusText, headers });
}

/** Whether the own client takes a request: a read, or a keyed write with a JSON body or none. */
function takenByClient(method: string, body: RequestBody, keyed: boolean): method is Http1Request['method'] {
  if (method === 'GET' || method === 'HEAD') return true;
  return keyed && body.kind !== 'multipart' && (method === 'POST' || method === 'PUT' || method === 'PATCH' || method === 'DELETE');
}

/**
 * Sends the request to the owning service with tenant, request id and internal credential,
 * streaming the body both ways. A refused connection is 503 service_unavailable; no answer
 * (headers) within the timeout is 504 upstream_timeout. The answer's headers are mutable.
 */
export async function forward(input: ForwardInput): Promise<Response> {
  const out: [string, string][] = [
    [h.tenant, input.tenantId],
    [h.requestId, input.requestId],
    [h.internalToken, input.internalToken],
  ];
  input.request.headers.forEach((value, key) => {
    if (!NOT_FORWARDED.has(key)) out.push([key, value]);
  });
  if (input.clientIp) out.push(['x-forwarded-for', input.clientIp]);

  let fetchBody: BodyInit | null = null;
  if (input.body.kind === 'json') {
    fetchBody = input.body.text;
    out.push(['content-type', 'application/json']);
  } else if (input.body.kind === 'multipart') {
    fetchBody = input.body.stream;
    const type = input.request.headers.get('content-type');
    if (type) out.push(['content-type', type]);
    const length = input.request.headers.get('content-length');
    if (length) out.push(['content-length', length]);
  }

  const pending = awaitAnswer(input.timeoutMs);
  if (input.cancel) input.cancel.controller = pending.controller;
  let upstream: Response;
  const method = input.request.method;
  const body = input.body;
  try {
    upstream =
      input.client && takenByClient(method, body, input.keyed === true)
        ? await input.client.request({
            method,
            path: input.pathAndQuery,
            headers: out,
            body: body.kind === 'json' ? body.text : undefined,
            repeatable: input.keyed,
            signal: pending.controller.signal,
          })
        : await fetch(input.baseUrl + input.pathAndQuery, {
            method,
            headers: out,
            body: fetchBody,
            redirect: 'manual',
            signal: pending.controller.signal,
            // @ts-expect-error: streaming request bodies need half duplex (Node/Deno/Bun fetch)
            duplex: 'half',
          });
  } catch (error) {
    if (input.body.kind === 'multipart' && input.body.exceeded()) {
      throw new AppError('payload_too_large', 'Uploads must be at most 20971520 bytes (20 MB)');
    }
    if (pending.controller.signal.aborted) throw new AppError('upstream_timeout', 'The upstream service did not answer in time');
    throw new AppError(
      'service_unavailable',
      `The upstream service is unavailable (${error instanceof Error ? error.message : 'connection failed'})`,
    );
  } finally {
    waiting.delete(pending);
  }
  return relay(upstream, input.requestId);
}

import http from 'node:http';
import https from 'node:https';
import { guardedLookup, literalTargetRefusal, type TargetPolicy } from '../ssrf/target-guard.ts';
import { parseWebhookUrl } from '../ssrf/webhook-url.ts';

const EXCERPT_BYTES = 2048;

export interface SendRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  targetPolicy: TargetPolicy;
}

/** What one POST produced: a status code (any, redirects included), or a network error. */
export interface SendResult {
  statusCode: number | null;
  retryAfter: string | null;
  excerpt: string | null;
  error: string | null;
  durationMs: number;
}

/** How long a connection to a receiver stays open without a request (below the 5 s idle timeout of Node's server, the shortest common one). */
export const IDLE_CONNECTION_MS = 4000;
/** Idle connections kept per receiver origin (host and port): as many as the default WEBHOOK_CONCURRENCY has in flight. */
const FREE_CONNECTIONS_PER_ORIGIN = 32;

/**
 * Connections to receivers are kept alive between attempts, per origin, as a customer's own HTTP
 * client would keep them: a receiver that gets one event after another pays one TCP (and TLS)
 * handshake, not one per event. A connection is checked once, when it is opened (the guarded
 * `lookup`, or the IP-literal check), and stays with the address it was checked against, so a
 * request on it never reaches an address the policy refuses; a name rebound later applies from
 * the next connection on. Idle connections close after IDLE_CONNECTION_MS.
 */
const agents = {
  'http:': new http.Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS, maxFreeSockets: FREE_CONNECTIONS_PER_ORIGIN }),
  'https:': new https.Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS, maxFreeSockets: FREE_CONNECTIONS_PER_ORIGIN }),
};

/** An attempt's outcome, or `stale`: a kept-alive connection the receiver had closed, before any answer. */
type Outcome = SendResult | 'stale';

/** Errors of a request written on a connection the other end had already closed. */
const STALE_CONNECTION = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/**
 * POSTs a webhook with node:http(s): no redirects followed, every resolved address re-checked
 * when a connection is opened, the whole exchange bounded by `timeoutMs`, and at most 2 KB of the
 * answer kept. A request that finds its kept-alive connection closed by the receiver (the race
 * every keep-alive client has with a server's idle timeout) is sent again once, on a new
 * connection, within the same time bound.
 */
export async function sendWebhook(request: SendRequest): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  // The registration rules again: a row stored before them (or edited since) gets no request.
  const { url, problem } = parseWebhookUrl(request.url);
  if (!url) return failure(`refused: url ${problem}`, elapsed());
  // node:http skips `lookup` for IP literals, so those are checked here.
  const literalRefusal = literalTargetRefusal(url, request.targetPolicy.allowedNets);
  if (literalRefusal) return failure(`refused: ${literalRefusal}`, elapsed());

  const deadline = started + request.timeoutMs;
  const first = await post(url, request, deadline, elapsed, true);
  if (first !== 'stale') return first;
  const second = await post(url, request, deadline, elapsed, false);
  return second === 'stale' ? failure('ECONNRESET: the receiver closed the connection', elapsed()) : second;
}

/** One POST, on a kept-alive connection (`pooled`) or on a new one closed afterwards. */
function post(url: URL, request: SendRequest, deadline: number, elapsed: () => number, pooled: boolean): Promise<Outcome> {
  return new Promise((resolve) => {
    let settled = false;
    let answered = false;
    const finish = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(
      url,
      {
        method: 'POST',
        headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
        lookup: guardedLookup(request.targetPolicy) as any,
        agent: pooled ? agents[url.protocol as keyof typeof agents] : false,
      },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        let size = 0;
        // Read to its end, the connection goes back to the pool; cut short, it is closed.
        const done = (complete: boolean) => {
          const retryAfter = res.headers['retry-after'];
          finish({
            statusCode: res.statusCode ?? null,
            retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
            excerpt: size > 0 ? Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8') : '',
            error: null,
            durationMs: elapsed(),
          });
          if (!complete) res.destroy();
        };
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size >= EXCERPT_BYTES) done(false);
        });
        res.on('end', () => done(true));
        res.on('error', () => done(false));
      },
    );
    const timer = setTimeout(
      () => {
        finish(failure(`timeout after ${request.timeoutMs} ms`, elapsed()));
        req.destroy();
      },
      Math.max(0, deadline - performance.now()),
    );
    req.on('error', (error: Error & { code?: string }) => {
      if (pooled && !answered && (req as { reusedSocket?: boolean }).reusedSocket && STALE_CONNECTION.has(error.code ?? '')) {
        finish('stale');
        return;
      }
      const reason =
        error.name === 'ForbiddenTargetError'
          ? `refused: ${error.message}`
          : error.code
            ? `${error.code}: ${error.message}`
            : error.message;
      finish(failure(reason, elapsed()));
    });
    req.end(request.body);
  });
}

function failure(error: string, durationMs: number): SendResult {
  return { statusCode: null, retryAfter: null, excerpt: null, error, durationMs };
}

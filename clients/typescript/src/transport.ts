import { apiErrorOf, CrmNetworkError } from './errors.ts';
import { isRetryableStatus, parseRetryAfter, type RetryPolicy, retryDelayMs } from './retry.ts';

/** One retry about to happen (for logs and metrics). */
export interface RetryEvent {
  method: string;
  path: string;
  /** The attempt that failed (1-based). */
  attempt: number;
  delayMs: number;
  /** The answer's status, or null when there was none (network error, timeout). */
  status: number | null;
  /** The error type of the answer, or the network error's message. */
  reason: string;
  idempotencyKey: string | null;
  requestId: string | null;
}

/** What the client needs of fetch (the global one, or any compatible function). */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export interface TransportConfig {
  baseUrl: string;
  apiKey: string;
  fetch: FetchLike;
  retry: RetryPolicy;
  /** Per attempt. */
  timeoutMs: number;
  onRetry?: (event: RetryEvent) => void;
}

export interface Outgoing {
  method: string;
  /** Path and query, e.g. `/v1/contacts?per_page=100`. */
  path: string;
  body?: string | FormData;
  headers?: Record<string, string>;
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/** A successful (or 304) answer, its body not read yet. */
export interface Delivered {
  response: Response;
  attempts: number;
  idempotencyKey: string | null;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

type Outcome = { kind: 'answer'; response: Response } | { kind: 'failure'; error: unknown };

/** A failed attempt: what to throw if no retry follows, and whether (and after how long) one may. */
interface Failure {
  error: Error;
  retryable: boolean;
  retryAfter: number | null;
  status: number | null;
  reason: string;
  requestId: string | null;
}

/**
 * Sends one API request with the key, an Idempotency-Key on every write (the same one on every
 * attempt), a timeout per attempt, and retries within the policy: network errors, timeouts, 5xx,
 * 429 and 409 `idempotency_key_in_use`, waiting `Retry-After` when the server names it. Throws
 * `CrmApiError` for an error answer and `CrmNetworkError` when no answer came.
 */
export async function transmit(config: TransportConfig, outgoing: Outgoing): Promise<Delivered> {
  const method = outgoing.method.toUpperCase();
  const idempotencyKey = WRITES.has(method) ? (outgoing.idempotencyKey ?? crypto.randomUUID()) : null;
  const headers: Record<string, string> = { accept: 'application/json', ...outgoing.headers, 'x-api-key': config.apiKey };
  if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
  const started = Date.now();

  for (let attempt = 1; ; attempt++) {
    const outcome = await attemptOnce(config, method, outgoing, headers);
    if (outcome.kind === 'answer' && outcome.response.status < 400)
      return { response: outcome.response, attempts: attempt, idempotencyKey };
    // The caller's own abort is an answer, not a failure to retry.
    if (outcome.kind === 'failure' && outgoing.signal?.aborted) throw outgoing.signal.reason;
    const failure = await failureOf(outcome, method, outgoing.path, attempt);
    const delay = failure.retryable ? retryDelayMs(attempt, Date.now() - started, failure.retryAfter, config.retry) : null;
    if (delay === null) throw failure.error;
    const { status, reason, requestId } = failure;
    config.onRetry?.({ method, path: outgoing.path, attempt, delayMs: delay, status, reason, idempotencyKey, requestId });
    await sleep(delay, outgoing.signal);
  }
}

async function failureOf(outcome: Outcome, method: string, path: string, attempts: number): Promise<Failure> {
  if (outcome.kind === 'failure') {
    const reason = outcome.error instanceof Error ? outcome.error.message : String(outcome.error);
    const error = new CrmNetworkError(method, path, attempts, outcome.error);
    return { error, retryable: true, retryAfter: null, status: null, reason, requestId: null };
  }
  const { response } = outcome;
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
  const error = apiErrorOf(response.status, response.headers, await response.text(), { method, path, attempts, retryAfter });
  const retryable = isRetryableStatus(error.status, error.type);
  return { error, retryable, retryAfter, status: error.status, reason: error.type, requestId: error.requestId };
}

async function attemptOnce(config: TransportConfig, method: string, outgoing: Outgoing, headers: Record<string, string>): Promise<Outcome> {
  // The timeout covers the wait for the answer's headers, not the reading of a large download.
  const timeout = new AbortController();
  const timer = setTimeout(
    () => timeout.abort(new DOMException(`no answer within ${config.timeoutMs} ms`, 'TimeoutError')),
    config.timeoutMs,
  );
  const signal = outgoing.signal ? AbortSignal.any([outgoing.signal, timeout.signal]) : timeout.signal;
  try {
    const response = await config.fetch(config.baseUrl + outgoing.path, {
      method,
      headers,
      body: outgoing.body,
      signal,
      redirect: 'manual',
    });
    return { kind: 'answer', response };
  } catch (error) {
    return { kind: 'failure', error };
  } finally {
    clearTimeout(timer);
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Fills `{name}` placeholders of an API path with URL-encoded values. */
export function expandPath(template: string, params: Record<string, unknown> | undefined): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = params?.[name];
    if (value === undefined || value === null) throw new TypeError(`missing path parameter "${name}" for ${template}`);
    return encodeURIComponent(String(value));
  });
}

/** `?a=1&b=x` from a query object; undefined and null values are left out, arrays joined by commas. */
export function queryString(query: Record<string, unknown> | undefined): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null) continue;
    search.set(key, Array.isArray(value) ? value.join(',') : String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

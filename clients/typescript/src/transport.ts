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
    const context = { method, path: outgoing.path, attempts: attempt };
    let delay: number | null;
    let failure: Error;
    let event: Omit<RetryEvent, 'delayMs'>;
    if (outcome.kind === 'answer') {
      const { response } = outcome;
      if (response.status < 400) return { response, attempts: attempt, idempotencyKey };
      const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
      const error = apiErrorOf(response.status, response.headers, await response.text(), { ...context, retryAfter });
      if (!isRetryableStatus(error.status, error.type)) throw error;
      delay = retryDelayMs(attempt, Date.now() - started, retryAfter, config.retry);
      failure = error;
      event = { ...context, attempt, status: error.status, reason: error.type, idempotencyKey, requestId: error.requestId };
    } else {
      // The caller's own abort is an answer, not a failure to retry.
      if (outgoing.signal?.aborted) throw outgoing.signal.reason;
      delay = retryDelayMs(attempt, Date.now() - started, null, config.retry);
      failure = new CrmNetworkError(method, outgoing.path, attempt, outcome.error);
      event = {
        ...context,
        attempt,
        status: null,
        reason: String((outcome.error as Error)?.message ?? outcome.error),
        idempotencyKey,
        requestId: null,
      };
    }
    if (delay === null) throw failure;
    config.onRetry?.({ ...event, delayMs: delay });
    await sleep(delay, outgoing.signal);
  }
}

async function attemptOnce(config: TransportConfig, method: string, outgoing: Outgoing, headers: Record<string, string>): Promise<Outcome> {
  const timeout = AbortSignal.timeout(config.timeoutMs);
  const signal = outgoing.signal ? AbortSignal.any([outgoing.signal, timeout]) : timeout;
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

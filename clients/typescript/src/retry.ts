/** How hard the client tries before it gives up on a request. */
export interface RetryOptions {
  /** Retries after the first attempt (default 4; 0 turns retrying off). */
  maxRetries?: number;
  /** Time for all attempts and waits together, in ms (default 60 000): no retry starts after it or waits past it. */
  budgetMs?: number;
  /** Backoff before the first retry when the server names no `Retry-After` (default 250 ms), doubled per retry. */
  baseDelayMs?: number;
  /** Longest backoff between two attempts when the server names no `Retry-After` (default 8 000 ms). */
  maxDelayMs?: number;
}

export type RetryPolicy = Required<RetryOptions>;

/** The policy with defaults filled in. */
export function retryPolicy({ maxRetries = 4, budgetMs = 60_000, baseDelayMs = 250, maxDelayMs = 8_000 }: RetryOptions = {}): RetryPolicy {
  return { maxRetries, budgetMs, baseDelayMs, maxDelayMs };
}

/**
 * Answers worth repeating with the same Idempotency-Key: the gateway never stores a 5xx, a 429
 * or an in-flight conflict under the key (contract §8), so the repeat either executes once or
 * replays the first write's answer. Every other 4xx would only fail again.
 */
export function isRetryableStatus(status: number, errorType: string | undefined): boolean {
  return status >= 500 || status === 429 || (status === 409 && errorType === 'idempotency_key_in_use');
}

/** Seconds of a `Retry-After` header (delta-seconds or an HTTP date), or null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * Exponential backoff with "equal jitter": half the doubled delay fixed, half random, so a crowd of
 * clients that failed together does not come back together, yet each still waits a while.
 */
export function backoffMs(retry: number, policy: RetryPolicy, random = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/**
 * How long to wait before retry number `retry` (1-based), or null when the policy says stop: out of
 * retries, or the wait (the server's `Retry-After`, never shortened, else the backoff) would end
 * past the budget.
 */
export function retryDelayMs(
  retry: number,
  elapsedMs: number,
  retryAfterSeconds: number | null,
  policy: RetryPolicy,
  random = Math.random,
): number | null {
  if (retry > policy.maxRetries) return null;
  const delay = retryAfterSeconds !== null ? retryAfterSeconds * 1000 : backoffMs(retry, policy, random);
  return elapsedMs + delay >= policy.budgetMs ? null : delay;
}

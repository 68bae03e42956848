import type { SendResult } from './http-sender.ts';

/** What an attempt's result means for the delivery. */
export type AttemptVerdict = 'delivered' | 'gone' | 'retryable';

/** 2xx delivered; 410 Gone disables the endpoint; everything else (3xx, 4xx, 5xx, timeouts, network errors) is retried. */
export function judgeAttempt(result: SendResult): AttemptVerdict {
  const code = result.statusCode;
  if (code !== null && code >= 200 && code < 300) return 'delivered';
  if (code === 410) return 'gone';
  return 'retryable';
}

const MAX_RETRY_AFTER_MS = 24 * 3600 * 1000;

/** A `Retry-After` value (seconds or HTTP date) in milliseconds from now, capped at 24 h. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  const ms = /^\d+$/.test(trimmed) ? Number(trimmed) * 1000 : Date.parse(trimmed) - now;
  if (!Number.isFinite(ms)) return undefined;
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}

/**
 * Delay before the attempt after attempt number `attempt` (1-based), or undefined when the
 * schedule is exhausted: the schedule's entry ± jitter, but never sooner than `Retry-After`.
 */
export function nextRetryDelayMs(
  attempt: number,
  scheduleMs: number[],
  jitter: number,
  retryAfter: string | null,
  random: () => number = Math.random,
): number | undefined {
  const base = scheduleMs[attempt - 1];
  if (base === undefined) return undefined;
  const jittered = Math.round(base * (1 + jitter * (2 * random() - 1)));
  return Math.max(jittered, retryAfterMs(retryAfter) ?? 0);
}

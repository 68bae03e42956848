// What a client is told about a budget: the RateLimit headers of every /v1 answer and the 429.
import { AppError } from '@crm/http';
import { admissible, type Bucket, PERIOD_MS, resetSeconds, retryAfterSeconds } from './gcra.ts';
import type { Budget, PolicyName } from './policy.ts';

export interface RateVerdict {
  policy: PolicyName;
  limit: number;
  allowed: boolean;
  /** Requests left in the window after this one. */
  remaining: number;
  /** Seconds until the bucket is completely refilled. */
  resetSeconds: number;
  /** Seconds to wait before a refused request can pass (0 when allowed). */
  retryAfterSeconds: number;
}

/** The verdict for a request of `budget` that leaves the bucket as `bucket`, seen at `nowMs`. */
export function verdictOf(budget: Budget, bucket: Bucket, nowMs: number, allowed: boolean): RateVerdict {
  return {
    policy: budget.policy,
    limit: budget.limit,
    allowed,
    remaining: admissible(bucket, nowMs, budget.limit),
    resetSeconds: resetSeconds(bucket, nowMs, budget.limit),
    retryAfterSeconds: allowed ? 0 : retryAfterSeconds(bucket, nowMs, budget.limit),
  };
}

/** The IETF draft headers every /v1 response carries: `RateLimit-Policy` and `RateLimit`. */
export function rateLimitHeaders(verdict: RateVerdict): Record<string, string> {
  return {
    'ratelimit-policy': `"${verdict.policy}";q=${verdict.limit};w=${PERIOD_MS / 1000}`,
    ratelimit: `"${verdict.policy}";r=${verdict.remaining};t=${verdict.resetSeconds}`,
  };
}

/** 429 rate_limited with `Retry-After`, for a refused request. */
export function rateLimitedError(verdict: RateVerdict): AppError {
  const what = verdict.policy === 'ip' ? 'unauthenticated requests from this address' : `${verdict.policy}s`;
  return new AppError('rate_limited', `Rate limit of ${verdict.limit} ${what} per minute exceeded`, undefined, {
    'retry-after': String(verdict.retryAfterSeconds),
  });
}

import { describe, expect, test } from 'bun:test';
import { addressBudget, preflightBudget, tenantBudget } from './policy.ts';
import { rateLimitedError, rateLimitHeaders, verdictOf } from './verdict.ts';

const tenant = { tenantId: 't1', readPerMinute: 120, writePerMinute: 30 };

describe('which budget a request spends (contract §7)', () => {
  test('GET and HEAD spend the read budget; POST, PUT, PATCH and DELETE the write budget', () => {
    for (const method of ['GET', 'HEAD'])
      expect(tenantBudget(method, tenant)).toEqual({ bucket: 'tenant:t1:read', policy: 'read', limit: 120, spends: true });
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'])
      expect(tenantBudget(method, tenant)).toEqual({ bucket: 'tenant:t1:write', policy: 'write', limit: 30, spends: true });
  });

  test('OPTIONS is not counted: it shows the read budget without spending it', () => {
    expect(tenantBudget('OPTIONS', tenant)).toEqual({ bucket: 'tenant:t1:read', policy: 'read', limit: 120, spends: false });
  });

  test('a request without a valid key spends its address budget whatever the method; an allowed preflight only shows it', () => {
    for (const method of ['GET', 'POST', 'OPTIONS'])
      expect({ method, budget: addressBudget('203.0.113.9', 60) }).toEqual({
        method,
        budget: { bucket: 'ip:203.0.113.9', policy: 'ip', limit: 60, spends: true },
      });
    expect(addressBudget(undefined, 60).bucket).toBe('ip:unknown');
    expect(preflightBudget('2001:db8::1', 60)).toEqual({ bucket: 'ip:2001:db8::1', policy: 'ip', limit: 60, spends: false });
  });
});

describe('what the client is told', () => {
  const NOW = 1_795_000_000_000;

  test('RateLimit-Policy and RateLimit name the policy, the limit, what is left and the reset', () => {
    const verdict = verdictOf(tenantBudget('POST', tenant), { anchorMs: NOW, intervals: 1 }, NOW, true);
    expect(verdict).toEqual({ policy: 'write', limit: 30, allowed: true, remaining: 29, resetSeconds: 2, retryAfterSeconds: 0 });
    expect(rateLimitHeaders(verdict)).toEqual({ 'ratelimit-policy': '"write";q=30;w=60', ratelimit: '"write";r=29;t=2' });
  });

  test('a refused request is 429 rate_limited with Retry-After', () => {
    const refused = verdictOf(tenantBudget('GET', tenant), { anchorMs: NOW, intervals: 120 }, NOW, false);
    expect(refused).toMatchObject({ remaining: 0, resetSeconds: 60, retryAfterSeconds: 1 });
    const error = rateLimitedError(refused);
    expect(error.type).toBe('rate_limited');
    expect(error.status).toBe(429);
    expect(error.headers).toEqual({ 'retry-after': '1' });
    expect(error.message).toBe('Rate limit of 120 reads per minute exceeded');
    expect(rateLimitedError(verdictOf(addressBudget('::1', 60), { anchorMs: NOW, intervals: 60 }, NOW, false)).message).toBe(
      'Rate limit of 60 unauthenticated requests from this address per minute exceeded',
    );
  });
});

import { describe, expect, test } from 'bun:test';
import { createClient } from './client.ts';
import { CrmApiError, CrmNetworkError, PreconditionFailedError } from './errors.ts';
import type { RetryEvent } from './transport.ts';

interface Seen {
  method: string;
  url: string;
  headers: Headers;
  body: string | null;
}

const envelope = (status: number, type: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ error: { type, message: `${type} happened`, request_id: 'r-1' } }), {
    status,
    headers: { 'content-type': 'application/json', 'x-request-id': 'r-1', ...headers },
  });
const created = () =>
  new Response(JSON.stringify({ data: { id: 1, name: 'Acme' } }), {
    status: 201,
    headers: { 'content-type': 'application/json', etag: '"v1"', 'x-request-id': 'r-2' },
  });

/** A client whose fetch answers from a script (a function per attempt) and records every request. */
function scripted(answers: (() => Response | Promise<Response>)[], retries = {}) {
  const seen: Seen[] = [];
  const retried: RetryEvent[] = [];
  const client = createClient({
    baseUrl: 'http://api.test/v1/',
    apiKey: 'crm_test',
    retries: { baseDelayMs: 1, maxDelayMs: 5, ...retries },
    onRetry: (event) => retried.push(event),
    fetch: async (url, init) => {
      seen.push({ method: String(init.method), url, headers: new Headers(init.headers), body: (init.body as string) ?? null });
      const next = answers[seen.length - 1];
      if (!next) throw new Error('script ran out');
      return next();
    },
  });
  return { client, seen, retried };
}

describe('retries', () => {
  test('a write keeps its Idempotency-Key across a network error, a 503, a 409 in use and a 429', async () => {
    const { client, seen, retried } = scripted([
      () => Promise.reject(new TypeError('connection reset')),
      () => envelope(503, 'service_unavailable'),
      () => envelope(409, 'idempotency_key_in_use', { 'retry-after': '0' }),
      () => envelope(429, 'rate_limited', { 'retry-after': '0' }),
      created,
    ]);
    const answer = await client.contacts.create({ name: 'Acme', type: 'client' });
    expect(answer.status).toBe(201);
    expect(answer.attempts).toBe(5);
    expect(answer.etag).toBe('"v1"');
    const keys = seen.map((s) => s.headers.get('idempotency-key'));
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.idempotencyKey).toBe(keys[0] as string);
    expect(seen.every((s) => s.url === 'http://api.test/v1/contacts' && s.body === '{"name":"Acme","type":"client"}')).toBe(true);
    expect(seen[0]?.headers.get('x-api-key')).toBe('crm_test');
    expect(retried.map((r) => r.status)).toEqual([null, 503, 409, 429]);
  });

  test('another 4xx is thrown at once, typed', async () => {
    for (const [status, type] of [
      [422, 'validation_error'],
      [409, 'conflict'],
      [404, 'not_found'],
      [400, 'bad_request'],
    ] as const) {
      const { client, seen } = scripted([() => envelope(status, type), created]);
      const error = await client.contacts.create({ name: 'Acme', type: 'client' }).catch((e) => e);
      expect(error).toBeInstanceOf(CrmApiError);
      expect({ status: error.status, type: error.type, requestId: error.requestId, attempts: error.attempts }).toEqual({
        status,
        type,
        requestId: 'r-1',
        attempts: 1,
      });
      expect(seen).toHaveLength(1);
    }
  });

  test('412 is a PreconditionFailedError; If-Match is sent', async () => {
    const { client, seen } = scripted([() => envelope(412, 'precondition_failed')]);
    const error = await client.contacts.update('Acme', { phone: '1' }, { ifMatch: '"old"' }).catch((e) => e);
    expect(error).toBeInstanceOf(PreconditionFailedError);
    expect(error.type).toBe('precondition_failed');
    expect(seen[0]?.headers.get('if-match')).toBe('"old"');
    expect(seen[0]?.method).toBe('PUT');
  });

  test('the retry count is a bound: the last answer is thrown with the attempts made', async () => {
    const { client, seen } = scripted(
      Array(5).fill(() => envelope(503, 'service_unavailable')),
      { maxRetries: 2 },
    );
    const error = await client.contacts.get('Acme').catch((e) => e);
    expect(error).toBeInstanceOf(CrmApiError);
    expect(error.attempts).toBe(3);
    expect(seen).toHaveLength(3);
    expect(seen[0]?.headers.get('idempotency-key')).toBeNull();
  });

  test('a Retry-After past the budget is not waited for', async () => {
    const { client, seen } = scripted([() => envelope(429, 'rate_limited', { 'retry-after': '120' }), created], { budgetMs: 5_000 });
    const started = Date.now();
    const error = await client.contacts.create({ name: 'Acme', type: 'client' }).catch((e) => e);
    expect(Date.now() - started).toBeLessThan(1000);
    expect({ status: error.status, retryAfter: error.retryAfter }).toEqual({ status: 429, retryAfter: 120 });
    expect(seen).toHaveLength(1);
  });

  test('no answer at all ends in CrmNetworkError carrying the cause', async () => {
    const { client } = scripted(
      Array(3).fill(() => Promise.reject(new TypeError('ECONNREFUSED'))),
      { maxRetries: 2 },
    );
    const error = await client.users.list().catch((e) => e);
    expect(error).toBeInstanceOf(CrmNetworkError);
    expect(error.attempts).toBe(3);
    expect(String(error.cause)).toContain('ECONNREFUSED');
  });

  test('an attempt without an answer in timeoutMs is abandoned and retried with the same key', async () => {
    const seen: (string | null)[] = [];
    const client = createClient({
      baseUrl: 'http://api.test',
      apiKey: 'crm_test',
      timeoutMs: 50,
      retries: { baseDelayMs: 1 },
      fetch: (_url, init) => {
        seen.push(new Headers(init.headers).get('idempotency-key'));
        if (seen.length > 1) return Promise.resolve(created());
        return new Promise((_, reject) => init.signal?.addEventListener('abort', () => reject(init.signal?.reason)));
      },
    });
    const answer = await client.contacts.create({ name: 'Acme', type: 'client' });
    expect(answer.attempts).toBe(2);
    expect(seen[0]).toBe(seen[1] as string);
  });

  test("the caller's abort is not retried", async () => {
    const controller = new AbortController();
    const { client, seen } = scripted([
      () => {
        controller.abort(new Error('stop'));
        return Promise.reject(new Error('aborted'));
      },
      created,
    ]);
    const error = await client.contacts.create({ name: 'Acme', type: 'client' }, { signal: controller.signal }).catch((e) => e);
    expect(error.message).toBe('stop');
    expect(seen).toHaveLength(1);
  });
});

describe('requests', () => {
  test('paths and queries are encoded; undefined query values are left out', async () => {
    const page = () =>
      new Response(JSON.stringify({ data: [], pagination: { has_more: false, next_cursor: null } }), {
        headers: { 'content-type': 'application/json' },
      });
    const { client, seen } = scripted([page, page]);
    await client.request('get', '/v1/contacts/{identifier}/documents', {
      params: { identifier: 'Acme Ltd/Paris' },
      query: { per_page: 5, sort: undefined },
    });
    expect(seen[0]?.url).toBe('http://api.test/v1/contacts/Acme%20Ltd%2FParis/documents?per_page=5');
    await client.contacts.list({ q: 'a&b' });
    expect(seen[1]?.url).toBe('http://api.test/v1/contacts?q=a%26b');
  });

  test('iterate: page mode first, then the cursor until has_more is false', async () => {
    const page = (ids: number[], next: string | null) => () =>
      new Response(JSON.stringify({ data: ids.map((id) => ({ id })), pagination: { has_more: next !== null, next_cursor: next } }), {
        headers: { 'content-type': 'application/json' },
      });
    const { client, seen } = scripted([page([1, 2], 'c1'), page([3, 4], 'c2'), page([5], null)]);
    const ids: number[] = [];
    for await (const contact of client.contacts.iterate({ per_page: 2, sort: 'name', page: 3 })) ids.push(contact.id);
    expect(ids).toEqual([1, 2, 3, 4, 5]);
    expect(seen.map((s) => s.url.replace('http://api.test', ''))).toEqual([
      '/v1/contacts?per_page=2&sort=name',
      '/v1/contacts?per_page=2&sort=name&cursor=c1',
      '/v1/contacts?per_page=2&sort=name&cursor=c2',
    ]);
  });
});

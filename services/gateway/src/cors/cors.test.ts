import { describe, expect, test } from 'bun:test';
import { ConfigError } from '@crm/config';
import { loadGatewayConfig } from '../config.ts';
import { createCorsPolicy, parseAllowedOrigins } from './cors.ts';

const APP = 'https://tools.example.com';
const policy = createCorsPolicy({ allowedOrigins: [APP, 'http://localhost:3000'] });
const preflight = (origin: string | null, method: string | null = 'POST') =>
  new Request('http://gw/v1/contacts', {
    method: 'OPTIONS',
    headers: { ...(origin ? { origin } : {}), ...(method ? { 'access-control-request-method': method } : {}) },
  });
const accessControl = (headers: Headers) => [...headers.keys()].filter((k) => k.startsWith('access-control-'));

describe('parseAllowedOrigins', () => {
  test('trims, drops empty entries and normalises like a browser serialises an Origin', () => {
    expect(parseAllowedOrigins('')).toEqual([]);
    expect(parseAllowedOrigins(' https://A.example.com:443 , ,http://localhost:3000')).toEqual([
      'https://a.example.com',
      'http://localhost:3000',
    ]);
  });

  test('refuses anything that is not an origin', () => {
    for (const bad of [
      '*',
      'null',
      'https://a.example.com/',
      'https://a.example.com/path',
      'ftp://a.example.com',
      'https://u@a.example.com',
    ])
      expect(() => parseAllowedOrigins(bad)).toThrow('CORS_ALLOWED_ORIGINS');
  });
});

describe('CORS_ALLOWED_ORIGINS in the gateway config', () => {
  const env = { INTERNAL_TOKEN: 'internal-token-0123456789', ADMIN_TOKEN: 'admin-token-0123456789' };

  test('empty by default; a list of origins is accepted as written', () => {
    expect(loadGatewayConfig(env).CORS_ALLOWED_ORIGINS).toBe('');
    const list = 'https://tools.example.com, http://localhost:3000';
    expect(loadGatewayConfig({ ...env, CORS_ALLOWED_ORIGINS: list }).CORS_ALLOWED_ORIGINS).toBe(list);
  });

  test('anything else stops start-up naming the variable', () => {
    for (const bad of ['*', 'null', 'https://a.example.com/', 'tools.example.com']) {
      try {
        loadGatewayConfig({ ...env, CORS_ALLOWED_ORIGINS: bad });
        throw new Error(`accepted ${bad}`);
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        expect((error as ConfigError).problems.join()).toContain('CORS_ALLOWED_ORIGINS is invalid');
      }
    }
  });
});

describe('preflight', () => {
  test('an allowed origin gets 204 with the allowed methods, headers, max age and Vary: Origin', () => {
    const response = policy.preflight(preflight(APP));
    expect(response?.status).toBe(204);
    const h = response?.headers as Headers;
    expect(h.get('access-control-allow-origin')).toBe(APP);
    expect(h.get('access-control-allow-methods')).toContain('PATCH');
    for (const name of ['x-api-key', 'content-type', 'idempotency-key', 'x-request-id', 'if-match', 'if-none-match'])
      expect(h.get('access-control-allow-headers')?.split(', ')).toContain(name);
    expect(h.get('access-control-max-age')).toBe('600');
    expect(h.get('vary')).toBe('Origin');
    expect(h.has('access-control-allow-credentials')).toBe(false);
  });

  test('another origin, no origin, or no Access-Control-Request-Method is not a preflight answered here', () => {
    expect(policy.preflight(preflight('https://evil.example.com'))).toBeUndefined();
    expect(policy.preflight(preflight('https://tools.example.com.evil.example'))).toBeUndefined();
    expect(policy.preflight(preflight(null))).toBeUndefined();
    expect(policy.preflight(preflight(APP, null))).toBeUndefined();
    expect(policy.preflight(new Request('http://gw/v1/contacts', { headers: { origin: APP } }))).toBeUndefined();
  });

  test('with no allowed origin nothing is ever answered', () => {
    expect(createCorsPolicy().preflight(preflight(APP))).toBeUndefined();
  });
});

describe('actual responses', () => {
  test('an allowed origin gets Allow-Origin, Expose-Headers and Vary: Origin added to an existing Vary', () => {
    const headers = new Headers({ vary: 'Accept-Encoding' });
    policy.decorate(new Request('http://gw/v1/contacts', { headers: { origin: APP } }), headers);
    expect(headers.get('access-control-allow-origin')).toBe(APP);
    expect(headers.get('access-control-expose-headers')).toBe(
      'X-Request-ID, RateLimit, RateLimit-Policy, Retry-After, Idempotent-Replayed, ETag, Link',
    );
    expect(headers.get('vary')).toBe('Accept-Encoding, Origin');
  });

  test('another origin gets no Access-Control-* header (only Vary: Origin)', () => {
    const headers = new Headers();
    policy.decorate(new Request('http://gw/v1/contacts', { headers: { origin: 'https://evil.example.com' } }), headers);
    expect(accessControl(headers)).toEqual([]);
    expect(headers.get('vary')).toBe('Origin');
  });

  test('CORS off: not a single header is added', () => {
    const headers = new Headers();
    createCorsPolicy().decorate(new Request('http://gw/v1/contacts', { headers: { origin: APP } }), headers);
    expect([...headers.keys()]).toEqual([]);
  });
});

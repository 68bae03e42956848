import { beforeAll, describe, expect, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, type ServiceProcess, spawnService } from '@crm/stack';
import { type Stack, sharedStack, type TestTenant } from '@crm/testing';

let stack: Stack;
let tenant: TestTenant;

beforeAll(async () => {
  stack = await sharedStack();
  tenant = await stack.createTenant();
}, 180_000);

function selfSignedCertificate() {
  const dir = mkdtempSync(join(tmpdir(), 'crm-tls-'));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  const result = spawnSync('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    key,
    '-out',
    cert,
    '-days',
    '1',
    '-subj',
    '/CN=localhost',
    '-addext',
    'subjectAltName=DNS:localhost,IP:127.0.0.1',
  ]);
  if (result.status !== 0) throw new Error(`openssl failed: ${result.stderr}`);
  return { cert, key, pem: readFileSync(cert, 'utf8') };
}

async function waitForTls(proc: ServiceProcess, url: string, ca: string) {
  for (let i = 0; i < 300; i++) {
    if (proc.child.exitCode !== null) throw new Error('TLS gateway exited');
    try {
      const res = await fetch(`${url}/readyz`, { tls: { ca } } as RequestInit);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error('TLS gateway not ready');
}

describe('HTTPS (contract §10)', () => {
  test('with TLS_CERT_FILE/TLS_KEY_FILE the gateway serves TLS', async () => {
    const { cert, key, pem } = selfSignedCertificate();
    const port = await freePort();
    const proc = spawnService({
      name: 'gateway',
      port,
      env: { ...stack.env, GATEWAY_PORT: String(port), TLS_CERT_FILE: cert, TLS_KEY_FILE: key, REQUIRE_HTTPS: 'true' },
      logFile: join(stack.logDir, `gateway-tls-${port}.log`),
    });
    try {
      const url = `https://127.0.0.1:${port}`;
      await waitForTls(proc, url, pem);
      const res = await fetch(`${url}/v1/users`, { headers: { 'x-api-key': tenant.apiKey }, tls: { ca: pem } } as RequestInit);
      expect(res.status).toBe(200); // TLS satisfies REQUIRE_HTTPS by itself
      expect((await res.json()).data).toHaveLength(1);
      // An untrusted certificate is refused by a client that checks it: this really is TLS.
      await expect(fetch(`${url}/livez`)).rejects.toThrow();
      // Plain HTTP on the TLS port does not get an answer from the API.
      const plain = await fetch(`http://127.0.0.1:${port}/v1/users`, { headers: { 'x-api-key': tenant.apiKey } }).then(
        (r) => r.status,
        () => 'refused',
      );
      expect(plain).not.toBe(200);
    } finally {
      await proc.stop();
    }
  });

  test('REQUIRE_HTTPS refuses plain HTTP with 403 https_required unless a trusted proxy says https', async () => {
    const strict = await stack.startGatewayReplica({ REQUIRE_HTTPS: 'true' });
    const behindProxy = await stack.startGatewayReplica({ REQUIRE_HTTPS: 'true', TRUSTED_PROXIES: '127.0.0.1,::1' });
    try {
      const headers = { 'x-api-key': tenant.apiKey, 'x-forwarded-proto': 'https' };
      const refused = await fetch(`${strict.url}/v1/users`, { headers });
      expect(refused.status).toBe(403);
      const body = await refused.json();
      expect(body.error.type).toBe('https_required');
      expect(body.error.request_id).toBe(refused.headers.get('x-request-id'));
      // Not trusted: the forwarded header is ignored. Admin API and docs are covered too; probes are not.
      expect((await fetch(`${strict.url}/admin/tenants`, { headers: { authorization: `Bearer ${stack.adminToken}` } })).status).toBe(403);
      expect((await fetch(`${strict.url}/openapi/v1.yaml`)).status).toBe(403);
      expect((await fetch(`${strict.url}/readyz`)).status).toBe(200);

      expect((await fetch(`${behindProxy.url}/v1/users`, { headers })).status).toBe(200);
      const plainViaProxy = await fetch(`${behindProxy.url}/v1/users`, {
        headers: { 'x-api-key': tenant.apiKey, 'x-forwarded-proto': 'http' },
      });
      expect(plainViaProxy.status).toBe(403);
      expect((await fetch(`${behindProxy.url}/v1/users`, { headers: { 'x-api-key': tenant.apiKey } })).status).toBe(403);
    } finally {
      await strict.stop();
      await behindProxy.stop();
    }
  });

  test('local development defaults to plain HTTP', async () => {
    expect((await tenant.request('GET', '/v1/users')).status).toBe(200);
  });
});

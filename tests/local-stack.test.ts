import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canConnect, freePort, repoRoot } from '@crm/stack';
import { type Stack, sharedStack } from '@crm/testing';
import pg from 'pg';

const bun = join(repoRoot, 'node_modules/.bin/bun');

test('admin CLI: `tenant create` prints the tenant with its key as JSON, and the key works', async () => {
  const stack: Stack = await sharedStack();
  const result = spawnSync(
    bun,
    ['services/gateway/src/cli.ts', 'tenant', 'create', '--name', 'Acme', '--user', 'ann@acme.test:Ann Lee', '--write', '60'],
    {
      cwd: repoRoot,
      env: { ...process.env, GATEWAY_URL: stack.gatewayUrl, ADMIN_TOKEN: stack.adminToken },
      encoding: 'utf8',
    },
  );
  expect(result.status).toBe(0);
  const created = JSON.parse(result.stdout);
  // Read before toMatchObject: Bun's toMatchObject writes the asymmetric matchers into the received object.
  const apiKey: string = created.api_key;
  expect(created).toMatchObject({
    name: 'Acme',
    api_key: expect.stringMatching(/^crm_[A-Za-z0-9_-]{43}$/),
    users: [{ id: expect.any(Number), email: 'ann@acme.test', name: 'Ann Lee' }],
    limits: { read_per_minute: 120, write_per_minute: 60 },
  });
  const users = await fetch(`${stack.gatewayUrl}/v1/users`, { headers: { 'x-api-key': apiKey } });
  expect(users.status).toBe(200);
  const refused = spawnSync(bun, ['services/gateway/src/cli.ts', 'tenant', 'list'], {
    cwd: repoRoot,
    env: { ...process.env, GATEWAY_URL: stack.gatewayUrl, ADMIN_TOKEN: 'wrong-admin-token' },
    encoding: 'utf8',
  });
  expect(refused.status).not.toBe(0);
  expect(refused.stderr).toContain('401');
});

describe('npm start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'crm-start-'));
  const database = `crm_start_${Date.now().toString(36)}`;
  let ports: number[] = [];

  beforeAll(async () => {
    ports = await Promise.all([1, 2, 3, 4, 5].map(() => freePort()));
  });

  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    const client = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
    await client.connect();
    await client.query(`drop database if exists ${database} with (force)`);
    await client.end();
  });

  test('npm start prints the gateway URL and a working key; Ctrl-C stops every process it started', async () => {
    const [gateway, sales, catalog, documents, webhooks] = ports as [number, number, number, number, number];
    const child = spawn(bun, ['deploy/local/start.ts'], {
      cwd: repoRoot,
      env: {
        ...process.env,
        GATEWAY_PORT: String(gateway),
        SALES_PORT: String(sales),
        CATALOG_PORT: String(catalog),
        DOCUMENTS_PORT: String(documents),
        WEBHOOKS_PORT: String(webhooks),
        DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${database}`,
        S3_BUCKET: `crm-start-${Date.now().toString(36)}`,
        CRM_STATE_FILE: join(dir, 'state.json'),
        CRM_DATA_DIR: join(repoRoot, '.data'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    const deadline = Date.now() + 90_000;
    while (!output.includes('Ctrl-C stops') && Date.now() < deadline && child.exitCode === null)
      await new Promise((r) => setTimeout(r, 200));
    expect(output).toContain(`http://127.0.0.1:${gateway}/v1`);
    const key = /API key\s+(crm_[A-Za-z0-9_-]{43})/.exec(output)?.[1];
    expect(key).toBeDefined();
    const health = await fetch(`http://127.0.0.1:${gateway}/v1/health`, { headers: { 'x-api-key': key as string } });
    expect(health.status).toBe(200);

    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(output).toContain('[start] stopped');
    for (const port of ports) expect(await canConnect('127.0.0.1', port)).toBe(false);
  }, 120_000);
});

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, ListBucketsCommand } from '@aws-sdk/client-s3';
import {
  acceptsCredentials,
  canConnect,
  ensureGoTool,
  ensureMinio,
  freePort,
  generatedS3Credentials,
  localS3CredentialsFile,
  repoRoot,
  type S3Env,
  s3Client,
} from '@crm/stack';
import { pollUntil, type Stack, sharedStack, until } from '@crm/testing';
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

describe('MinIO credentials (contract §20)', () => {
  test('the MinIO that npm test and npm start use refuses minioadmin and accepts the generated keys', async () => {
    const stack: Stack = await sharedStack();
    if (!process.env.S3_ACCESS_KEY) {
      const saved = JSON.parse(readFileSync(localS3CredentialsFile, 'utf8'));
      expect(stack.s3).toMatchObject({ accessKey: saved.access_key, secretKey: saved.secret_key });
      expect(stack.env).toMatchObject({ S3_ACCESS_KEY: saved.access_key, S3_SECRET_KEY: saved.secret_key });
      expect(statSync(localS3CredentialsFile).mode & 0o077).toBe(0);
    }
    expect(stack.s3.accessKey).not.toBe('minioadmin');
    expect(await acceptsCredentials(stack.s3)).toBe(true);
    expect(await acceptsCredentials({ ...stack.s3, accessKey: 'minioadmin', secretKey: 'minioadmin' })).toBe(false);
  });

  test('a MinIO of ours still running with minioadmin is restarted with the generated keys; its data stays', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'crm-minio-restart-'));
    const port = await freePort();
    const endpoint = `http://127.0.0.1:${port}`;
    mkdirSync(join(dir, 'minio'));
    // What an older checkout left behind: the pinned MinIO, detached, with the default keys.
    const old = spawn(
      ensureGoTool('minio'),
      ['server', join(dir, 'minio'), '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${await freePort()}`, '--quiet'],
      { env: { ...process.env, MINIO_ROOT_USER: 'minioadmin', MINIO_ROOT_PASSWORD: 'minioadmin', MINIO_BROWSER: 'off' }, stdio: 'ignore' },
    );
    let restarted: ChildProcess | undefined;
    const defaults: S3Env = { endpoint, region: 'us-east-1', accessKey: 'minioadmin', secretKey: 'minioadmin' };
    try {
      await until('the old MinIO to accept connections', () => canConnect('127.0.0.1', port), { timeoutMs: 30_000, everyMs: 100 });
      const before = s3Client(defaults);
      await before.send(new CreateBucketCommand({ Bucket: 'kept-bucket' }));
      before.destroy();

      const generated: S3Env = { ...defaults, ...generatedS3Credentials(join(dir, 'credentials.json')), generated: true };
      const logs: string[] = [];
      const started = await ensureMinio(generated, dir, (m) => logs.push(m));
      restarted = started?.process;
      expect(logs.join('\n')).toContain(`restarting MinIO on 127.0.0.1:${port} (pid ${old.pid})`);
      expect(old.exitCode !== null || old.signalCode !== null).toBe(true);
      expect(await acceptsCredentials(generated)).toBe(true);
      expect(await acceptsCredentials(defaults)).toBe(false);
      const after = s3Client(generated);
      expect((await after.send(new ListBucketsCommand({}))).Buckets?.map((b) => b.Name)).toEqual(['kept-bucket']);
      after.destroy();
      // A second call finds it right and leaves it alone.
      expect(await ensureMinio(generated, dir, (m) => logs.push(m))).toBeUndefined();
    } finally {
      old.kill('SIGKILL');
      restarted?.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  test('keys set in S3_ACCESS_KEY/S3_SECRET_KEY that MinIO refuses are an error, never a restart', async () => {
    const stack: Stack = await sharedStack();
    const wrong: S3Env = { ...stack.s3, accessKey: 'someone-else', secretKey: 'not-the-secret', generated: false };
    await expect(ensureMinio(wrong, join(repoRoot, '.data'), () => {})).rejects.toThrow('refuses S3_ACCESS_KEY/S3_SECRET_KEY');
    expect(await acceptsCredentials(stack.s3)).toBe(true);
  });
});

describe('npm start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'crm-start-'));
  const database = `crm_start_${Date.now().toString(36)}`;
  let ports: number[] = [];

  beforeAll(async () => {
    ports = await Promise.all([1, 2, 3, 4, 5, 6].map(() => freePort()));
  });

  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    const client = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
    await client.connect();
    await client.query(`drop database if exists ${database} with (force)`);
    await client.end();
  });

  test('npm start prints the gateway URL, the ops URL and a working key; Ctrl-C stops every process it started', async () => {
    const [gateway, sales, catalog, documents, webhooks, ops] = ports as [number, number, number, number, number, number];
    const child = spawn(bun, ['deploy/local/start.ts'], {
      cwd: repoRoot,
      env: {
        ...process.env,
        GATEWAY_PORT: String(gateway),
        GATEWAY_OPS_PORT: String(ops),
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
    const running = () => child.exitCode === null && child.signalCode === null;
    try {
      // Until the ready line, or until it exits without one (then the output says why).
      await pollUntil(
        'npm start to print its ready line ("Ctrl-C stops")',
        async () => output,
        (printed) => printed.includes('Ctrl-C stops') || !running(),
        { timeoutMs: 90_000, everyMs: 200, show: (printed) => printed.slice(-1500) },
      );
      expect(output).toContain(`http://127.0.0.1:${gateway}/v1`);
      const key = /API key\s+(crm_[A-Za-z0-9_-]{43})/.exec(output)?.[1];
      expect(key).toBeDefined();
      const health = await fetch(`http://127.0.0.1:${gateway}/v1/health`, { headers: { 'x-api-key': key as string } });
      expect(health.status).toBe(200);
      expect(output).toMatch(new RegExp(`Operations +http://127\\.0\\.0\\.1:${ops}/metrics`));
      expect((await fetch(`http://127.0.0.1:${ops}/metrics`)).status).toBe(200);
      expect((await fetch(`http://127.0.0.1:${gateway}/metrics`)).status).toBe(404);

      child.kill('SIGINT');
      expect(await exited).toBe(0);
      expect(output).toContain('[start] stopped');
      for (const port of ports) expect(await canConnect('127.0.0.1', port)).toBe(false);
    } finally {
      // A failed check above must not leave the started services holding their ports: Ctrl-C, as a user would.
      if (running()) {
        child.kill('SIGINT');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
        if (running()) child.kill('SIGKILL');
      }
    }
  }, 120_000);
});

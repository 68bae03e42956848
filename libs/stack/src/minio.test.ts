import { afterAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatedS3Credentials, localS3 } from './minio.ts';

const dir = mkdtempSync(join(tmpdir(), 'crm-s3-credentials-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('generated S3 credentials', () => {
  test('generated once, random, kept with mode 0600 and read back on the next call', () => {
    const file = join(dir, 'a', 's3-credentials.json');
    const first = generatedS3Credentials(file);
    expect(first.accessKey).toMatch(/^crm-[0-9a-f]{12}$/);
    expect(first.secretKey).toMatch(/^[A-Za-z0-9_-]{40}$/);
    expect(first.accessKey).not.toBe('minioadmin');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ access_key: first.accessKey, secret_key: first.secretKey });
    expect(generatedS3Credentials(file)).toEqual(first);
    expect(generatedS3Credentials(join(dir, 'b', 's3-credentials.json'))).not.toEqual(first);
  });

  test('concurrent first runs (separate processes) agree on one pair', async () => {
    const file = join(dir, 'race', 's3-credentials.json');
    const script = `const { generatedS3Credentials } = await import(${JSON.stringify(join(import.meta.dir, 'minio.ts'))});
      console.log(JSON.stringify(generatedS3Credentials(${JSON.stringify(file)})));`;
    const runs = Array.from({ length: 6 }, () => Bun.spawn([process.execPath, '-e', script], { stdout: 'pipe', stderr: 'inherit' }));
    const printed = await Promise.all(runs.map(async (run) => (await new Response(run.stdout).text()).trim()));
    expect(printed.every((line) => line.startsWith('{"accessKey":"crm-'))).toBe(true);
    expect(new Set(printed).size).toBe(1);
  });

  test('S3_ACCESS_KEY/S3_SECRET_KEY win over the generated pair', () => {
    const file = join(dir, 'env', 's3-credentials.json');
    const explicit = localS3({ S3_ACCESS_KEY: 'ops-key', S3_SECRET_KEY: 'ops-secret-123', S3_ENDPOINT: 'http://s3.internal:9000' }, file);
    expect(explicit).toEqual({
      endpoint: 'http://s3.internal:9000',
      region: 'us-east-1',
      accessKey: 'ops-key',
      secretKey: 'ops-secret-123',
    });
    const generated = localS3({}, file);
    expect(generated).toMatchObject({ endpoint: 'http://127.0.0.1:9000', generated: true, ...generatedS3Credentials(file) });
  });
});

import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListMultipartUploadsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { ensureGoTool, freePort, localS3, s3Client } from '@crm/stack';
import { pollUntil, type Stack, startStack, type TestTenant, until } from '@crm/testing';
import { createContact, documentRows, pdf, uploadToContact } from './documents-fixtures.ts';

// A MinIO of this test's own: the shared one serves every other test file and must stay up.
const minio = { port: 0, consolePort: 0, dir: '', child: undefined as ChildProcess | undefined };
const endpoint = () => `http://127.0.0.1:${minio.port}`;

async function startMinio(): Promise<void> {
  // The keys the stack hands the documents service (the generated local ones unless S3_* are set).
  const { accessKey, secretKey } = localS3();
  minio.child = spawn(
    ensureGoTool('minio'),
    ['server', minio.dir, '--address', `127.0.0.1:${minio.port}`, '--console-address', `127.0.0.1:${minio.consolePort}`, '--quiet'],
    { env: { ...process.env, MINIO_ROOT_USER: accessKey, MINIO_ROOT_PASSWORD: secretKey, MINIO_BROWSER: 'off' }, stdio: 'ignore' },
  );
  const live = () =>
    fetch(`${endpoint()}/minio/health/live`, { signal: AbortSignal.timeout(1000) }).then(
      (res) => res.ok,
      () => false,
    );
  await until('the private MinIO to start', live, { timeoutMs: 60_000, everyMs: 200 });
}

async function killMinio(): Promise<void> {
  const child = minio.child;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

let stack: Stack;
let tenant: TestTenant;
let contact: number;

beforeAll(async () => {
  minio.port = await freePort();
  minio.consolePort = await freePort();
  minio.dir = mkdtempSync(join(tmpdir(), 'crm-minio-'));
  await startMinio();
  stack = await startStack({ env: { S3_ENDPOINT: endpoint(), OBJECT_DELETION_RETRY_MS: '300' } });
  tenant = await stack.createTenant();
  contact = await createContact(tenant);
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  await killMinio();
  rmSync(minio.dir, { recursive: true, force: true });
});

async function privateBucket() {
  const s3 = s3Client({ ...stack.s3, endpoint: endpoint() });
  try {
    const objects = await s3.send(new ListObjectsV2Command({ Bucket: stack.bucket, Prefix: `${tenant.tenantId}/` }));
    const uploads = await s3.send(new ListMultipartUploadsCommand({ Bucket: stack.bucket }));
    return {
      keys: (objects.Contents ?? []).map((o) => o.Key as string),
      pendingUploads: (uploads.Uploads ?? []).filter((u) => u.Key?.startsWith(`${tenant.tenantId}/`)).length,
    };
  } finally {
    s3.destroy();
  }
}

const MiB = 1024 * 1024;

describe('storage faults', () => {
  test('the private MinIO serves uploads', async () => {
    const res = await uploadToContact(tenant, contact, 'before.pdf', pdf());
    expect(res.status).toBe(201);
    expect((await privateBucket()).keys).toEqual([`${tenant.tenantId}/${res.body.data.filename}`]);
  });

  test('MinIO dies in the middle of an upload → 503 service_unavailable and no row', async () => {
    const rowsBefore = await documentRows(stack, tenant.tenantId);
    const boundary = 'crmfaultboundary';
    const encoder = new TextEncoder();
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n\r\n`));
      },
      async pull(controller) {
        if (sent === 6 * MiB) {
          // The first 5 MiB part is on its way to MinIO: now MinIO goes away.
          await Bun.sleep(300);
          await killMinio();
        }
        if (sent < 12 * MiB) {
          controller.enqueue(new Uint8Array(MiB).fill(0x61));
          sent += MiB;
        } else {
          controller.enqueue(encoder.encode(`\r\n--${boundary}--\r\n`));
          controller.close();
        }
      },
    });
    const response = await fetch(`${stack.gatewayUrl}/v1/contacts/${contact}/documents`, {
      method: 'POST',
      headers: { 'x-api-key': tenant.apiKey, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
      // @ts-expect-error: streaming request bodies need half duplex
      duplex: 'half',
    });
    expect(response.status).toBe(503);
    expect((await response.json()).error.type).toBe('service_unavailable');
    expect(await documentRows(stack, tenant.tenantId)).toBe(rowsBefore);
  });

  test('an upload while MinIO is down → 503 and no row', async () => {
    const rowsBefore = await documentRows(stack, tenant.tenantId);
    const res = await uploadToContact(tenant, contact, 'down.pdf', pdf());
    expect(res.status).toBe(503);
    expect(res.body.error.type).toBe('service_unavailable');
    expect(await documentRows(stack, tenant.tenantId)).toBe(rowsBefore);
  });

  test('MinIO back → uploads work again without restarting the documents service', async () => {
    const documentsPid = stack.processes.documents.child.pid;
    await startMinio();
    const res = await uploadToContact(tenant, contact, 'after.pdf', pdf());
    expect(res.status).toBe(201);
    expect(stack.processes.documents.child.pid).toBe(documentsPid);
    const stored = await privateBucket();
    expect(stored.keys).toContain(`${tenant.tenantId}/${res.body.data.filename}`);
    // Only the two successful uploads left objects; the interrupted one left none.
    expect(stored.keys).toHaveLength(2);
    expect(await documentRows(stack, tenant.tenantId)).toBe(2);
  });
});

describe('sales faults', () => {
  test('sales down → 503 on upload, link and contact lists; nothing stored', async () => {
    const before = await privateBucket();
    const id = (await tenant.request('GET', '/v1/documents')).body.data[0].id;
    await stack.stopProcess('sales');
    try {
      const upload = await uploadToContact(tenant, contact, 'no-sales.pdf', pdf());
      expect(upload.status).toBe(503);
      expect(upload.body.error.type).toBe('service_unavailable');
      expect((await tenant.request('PUT', `/v1/opportunities/1/documents/${id}`)).status).toBe(503);
      expect((await tenant.request('GET', `/v1/contacts/${contact}/documents`)).status).toBe(503);
      expect(await privateBucket()).toEqual(before);
      // Documents' own reads do not need sales.
      expect((await tenant.request('GET', `/v1/documents/${id}`)).status).toBe(200);
    } finally {
      await stack.restartProcess('sales');
    }
    expect((await uploadToContact(tenant, contact, 'with-sales.pdf', pdf())).status).toBe(201);
  });
});

describe('storage faults after a commit', () => {
  test('MinIO down during DELETE → 200 and the row is gone; the files go once MinIO is back', async () => {
    const kept = await privateBucket();
    const uploads = [
      await uploadToContact(tenant, contact, 'gone1.pdf', pdf()),
      await uploadToContact(tenant, contact, 'gone2.pdf', pdf()),
    ];
    const keys = uploads.map((u) => `${tenant.tenantId}/${u.body.data.filename}`);
    expect((await privateBucket()).keys).toEqual(expect.arrayContaining(keys));
    await killMinio();
    // One without a key (the object goes right after the commit) and one with (once the answer is out).
    const plain = await tenant.request('DELETE', `/v1/documents/${uploads[0]?.body.data.id}`);
    const keyed = await tenant.request('DELETE', `/v1/documents/${uploads[1]?.body.data.id}`, {
      headers: { 'idempotency-key': crypto.randomUUID() },
    });
    expect([plain.status, plain.body, keyed.status, keyed.body]).toEqual([200, { deleted: true }, 200, { deleted: true }]);
    for (const u of uploads) expect((await tenant.request('GET', `/v1/documents/${u.body.data.id}`)).status).toBe(404);
    const pending = async () =>
      (
        await stack.sql('select storage_key from documents.object_deletions where tenant_id = $1 order by storage_key', [tenant.tenantId])
      ).rows.map((r: { storage_key: string }) => r.storage_key);
    expect(await pending()).toEqual([...keys].sort());
    await startMinio();
    const stored = await pollUntil(
      'the objects of the deleted documents to go',
      privateBucket,
      (s) => !keys.some((k) => s.keys.includes(k)),
      { timeoutMs: 20_000, everyMs: 200 },
    );
    expect(stored.keys.sort()).toEqual([...kept.keys].sort());
    expect(await pending()).toEqual([]);
  });
});

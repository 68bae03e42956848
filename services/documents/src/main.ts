import { loadOrExit, runService } from '@crm/boot';
import { createInternalClient } from '@crm/http';
import { startIdempotencyPurge } from '@crm/idempotency';
import { createApp } from './app.ts';
import { loadDocumentsConfig } from './config.ts';
import type { DocumentsDatabase } from './db/database.ts';
import { migrations } from './db/migrations/index.ts';
import { startObjectDeletionRetries } from './documents/object-deletions.ts';
import { startDeletionsConsumer } from './events/deletions-consumer.ts';
import { createSalesDirectory } from './sales/client.ts';
import { checkBucket, createS3, createStorage, ensureBucket } from './storage/s3.ts';

const config = loadOrExit('documents', () => loadDocumentsConfig());
const s3 = createS3({
  endpoint: config.S3_ENDPOINT,
  region: config.S3_REGION,
  accessKeyId: config.S3_ACCESS_KEY,
  secretAccessKey: config.S3_SECRET_KEY,
  bucket: config.S3_BUCKET,
});

await runService<DocumentsDatabase>({
  name: 'documents',
  schema: 'documents',
  port: config.DOCUMENTS_PORT,
  config,
  migrations,
  relay: true,
  async start({ db, nc, logger, readiness }) {
    await ensureBucket(s3, config.S3_BUCKET).catch((error) => logger.warn('bucket not ready yet', { error: String(error) }));
    const checks = [...readiness, { name: 'storage', check: () => checkBucket(s3, config.S3_BUCKET) }];
    const sales = createSalesDirectory(createInternalClient({ service: 'sales', baseUrl: config.SALES_URL, token: config.INTERNAL_TOKEN }));
    const storage = createStorage(s3, config.S3_BUCKET);
    const { fetch } = createApp({ db, logger, internalToken: config.INTERNAL_TOKEN, readiness: checks, storage, sales });
    const consumer = startDeletionsConsumer({ nc, db, logger, stream: config.EVENTS_STREAM, subjectPrefix: config.EVENTS_SUBJECT_PREFIX });
    const purge = startIdempotencyPurge(db, logger);
    const objectDeletions = startObjectDeletionRetries(db, storage, logger, config.OBJECT_DELETION_RETRY_MS);
    return { fetch, background: [consumer, purge, objectDeletions] };
  },
});

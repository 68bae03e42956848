import { loadOrExit, runService } from '@crm/boot';
import { createApp } from './app.ts';
import { loadDocumentsConfig } from './config.ts';
import type { DocumentsDatabase } from './db/database.ts';
import { migrations } from './db/migrations/index.ts';
import { checkBucket, createS3, ensureBucket } from './storage/s3.ts';

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
  async start({ db, logger, readiness }) {
    await ensureBucket(s3, config.S3_BUCKET).catch((error) => logger.warn('bucket not ready yet', { error: String(error) }));
    const checks = [...readiness, { name: 'storage', check: () => checkBucket(s3, config.S3_BUCKET) }];
    const { fetch } = createApp({ db, logger, internalToken: config.INTERNAL_TOKEN, readiness: checks });
    return { fetch };
  },
});

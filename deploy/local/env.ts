import { join } from 'node:path';
import { repoRoot, type S3Env } from '@crm/stack';

/** Local defaults of the stack; each can be overridden by the env variable of the same name. */
export function localSettings(env: Record<string, string | undefined> = process.env) {
  const s3: S3Env = {
    endpoint: env.S3_ENDPOINT ?? 'http://127.0.0.1:9000',
    accessKey: env.S3_ACCESS_KEY ?? 'minioadmin',
    secretKey: env.S3_SECRET_KEY ?? 'minioadmin',
    region: env.S3_REGION ?? 'us-east-1',
  };
  return {
    databaseUrl: env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/crm',
    natsUrl: env.NATS_URL ?? 'nats://127.0.0.1:4222',
    s3,
    bucket: env.S3_BUCKET ?? 'crm-documents',
    dataDir: env.CRM_DATA_DIR ?? join(repoRoot, '.data'),
    stateFile: env.CRM_STATE_FILE ?? join(repoRoot, '.local', 'state.json'),
  };
}

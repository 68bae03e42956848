import { join } from 'node:path';
import { localS3, repoRoot } from '@crm/stack';

/**
 * Local defaults of the stack; each can be overridden by the env variable of the same name. The
 * S3 keys, unless S3_ACCESS_KEY/S3_SECRET_KEY are set, are generated once and kept in
 * ~/.local/state/crm-api/s3-credentials.json (contract §20: never MinIO's default credentials).
 */
export function localSettings(env: Record<string, string | undefined> = process.env) {
  const s3 = localS3(env);
  return {
    databaseUrl: env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/crm',
    natsUrl: env.NATS_URL ?? 'nats://127.0.0.1:4222',
    s3,
    bucket: env.S3_BUCKET ?? 'crm-documents',
    dataDir: env.CRM_DATA_DIR ?? join(repoRoot, '.data'),
    stateFile: env.CRM_STATE_FILE ?? join(repoRoot, '.local', 'state.json'),
  };
}

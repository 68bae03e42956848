import { commonServiceEnv, loadConfig, Port, Type } from '@crm/config';

export const DocumentsEnv = Type.Object({
  ...commonServiceEnv,
  DOCUMENTS_PORT: Port(8083),
  SALES_URL: Type.String({ default: 'http://127.0.0.1:8081' }),
  S3_ENDPOINT: Type.String({ default: 'http://127.0.0.1:9000' }),
  S3_REGION: Type.String({ default: 'us-east-1' }),
  S3_ACCESS_KEY: Type.String({ default: 'minioadmin' }),
  S3_SECRET_KEY: Type.String({ default: 'minioadmin' }),
  S3_BUCKET: Type.String({ default: 'crm-documents' }),
  /** How often the stored objects of deleted documents that storage could not remove are retried. */
  OBJECT_DELETION_RETRY_MS: Type.Integer({ minimum: 100, default: 60_000 }),
});

export type DocumentsConfig = ReturnType<typeof loadDocumentsConfig>;

/** Documents configuration, parsed once from the environment. */
export const loadDocumentsConfig = (env: Record<string, string | undefined> = process.env) => loadConfig(DocumentsEnv, env);

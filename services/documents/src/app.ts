import { createServiceKit, type Logger, type ReadinessCheck } from '@crm/http';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import type { DocumentsDatabase } from './db/database.ts';

export interface DocumentsDeps {
  db: Kysely<DocumentsDatabase>;
  logger: Logger;
  internalToken: string;
  readiness: ReadinessCheck[];
}

/** The documents HTTP app. */
export function createApp(deps: DocumentsDeps) {
  const kit = createServiceKit({ service: 'documents', logger: deps.logger, internalToken: deps.internalToken, readiness: deps.readiness });
  const app = new Elysia({ normalize: false }).use(kit.plugin);
  return { app, fetch: kit.handler(app) };
}

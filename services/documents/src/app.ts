import { createServiceKit, type Logger, type ReadinessCheck } from '@crm/http';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import type { DocumentsDatabase } from './db/database.ts';
import { documentRoutes } from './documents/routes.ts';
import { contactDocumentRoutes, opportunityDocumentRoutes } from './documents/scoped-routes.ts';
import type { SalesDirectory } from './sales/client.ts';
import type { Storage } from './storage/s3.ts';

export interface DocumentsDeps {
  db: Kysely<DocumentsDatabase>;
  logger: Logger;
  internalToken: string;
  readiness: ReadinessCheck[];
  storage: Storage;
  sales: SalesDirectory;
}

/** The documents HTTP app. */
export function createApp(deps: DocumentsDeps) {
  const kit = createServiceKit({ service: 'documents', logger: deps.logger, internalToken: deps.internalToken, readiness: deps.readiness });
  const app = new Elysia({ normalize: false })
    .use(kit.plugin)
    .use(documentRoutes(deps.db, deps.storage))
    .use(contactDocumentRoutes(deps.db, deps.storage, deps.sales))
    .use(opportunityDocumentRoutes(deps.db, deps.storage, deps.sales));
  return { app, fetch: kit.handler(app) };
}

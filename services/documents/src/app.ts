import { createServiceKit, type Logger, type ReadinessCheck } from '@crm/http';
import { exactlyOnce } from '@crm/idempotency';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import type { DocumentsDatabase } from './db/database.ts';
import { documentsRoutes } from './documents/routes.ts';
import { contactDocumentsRoutes, opportunityDocumentsRoutes } from './documents/scoped-routes.ts';
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

/**
 * The documents HTTP app. Every write (uploads, deletion, link/unlink, attach/detach) is
 * exactly-once under an Idempotency-Key (contract §21).
 */
export function createApp(deps: DocumentsDeps) {
  const kit = createServiceKit({ service: 'documents', logger: deps.logger, internalToken: deps.internalToken, readiness: deps.readiness });
  const app = new Elysia({ normalize: false })
    .use(kit.plugin)
    .use(exactlyOnce(deps.db))
    .use(documentsRoutes(deps.db, deps.storage))
    .use(contactDocumentsRoutes(deps.db, deps.storage, deps.sales))
    .use(opportunityDocumentsRoutes(deps.db, deps.storage, deps.sales));
  return { app, fetch: kit.handler(app) };
}

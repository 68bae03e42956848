import { outboxMigration } from '@crm/events';
import { m0001Documents } from './0001_documents.ts';

/** Documents migrations in order; append only. */
export const migrations = [outboxMigration, m0001Documents];

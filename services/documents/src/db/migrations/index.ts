import { outboxMigration } from '@crm/events';
import { m0001Documents } from './0001_documents.ts';
import { m0002InputBounds } from './0002_input_bounds.ts';

/** Documents migrations in order; append only. */
export const migrations = [outboxMigration, m0001Documents, m0002InputBounds];

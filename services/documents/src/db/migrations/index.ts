import { outboxMigration } from '@crm/events';
import { idempotencyMigration } from '@crm/idempotency';
import { m0001Documents } from './0001_documents.ts';
import { m0002InputBounds } from './0002_input_bounds.ts';
import { m0003ListIndexes } from './0003_list_indexes.ts';
import { m0004ObjectDeletions } from './0004_object_deletions.ts';

/** Documents migrations in order; append only. */
export const migrations = [outboxMigration, m0001Documents, m0002InputBounds, m0003ListIndexes, idempotencyMigration, m0004ObjectDeletions];

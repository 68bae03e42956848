import { outboxMigration } from '@crm/events';
import { idempotencyMigration } from '@crm/idempotency';
import { m0001Catalog } from './0001_catalog.ts';
import { m0002InputBounds } from './0002_input_bounds.ts';
import { m0003ListIndexes } from './0003_list_indexes.ts';

/** Catalog migrations in order; append only. */
export const migrations = [outboxMigration, m0001Catalog, m0002InputBounds, m0003ListIndexes, idempotencyMigration];

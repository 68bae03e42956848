import { outboxMigration } from '@crm/events';
import { m0001Catalog } from './0001_catalog.ts';
import { m0002InputBounds } from './0002_input_bounds.ts';

/** Catalog migrations in order; append only. */
export const migrations = [outboxMigration, m0001Catalog, m0002InputBounds];

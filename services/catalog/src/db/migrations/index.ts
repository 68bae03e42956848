import { outboxMigration } from '@crm/events';
import { m0001Catalog } from './0001_catalog.ts';

/** Catalog migrations in order; append only. */
export const migrations = [outboxMigration, m0001Catalog];

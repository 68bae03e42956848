import { outboxMigration } from '@crm/events';

/** Catalog migrations in order; append only. */
export const migrations = [outboxMigration];

import { outboxMigration } from '@crm/events';

/** Documents migrations in order; append only. */
export const migrations = [outboxMigration];

import { outboxMigration } from '@crm/events';

/** Webhooks migrations in order; append only. */
export const migrations = [outboxMigration];

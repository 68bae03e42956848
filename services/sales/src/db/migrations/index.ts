import { outboxMigration } from '@crm/events';
import { m0001Users } from './0001_users.ts';

/** Sales migrations in order; append only. */
export const migrations = [outboxMigration, m0001Users];

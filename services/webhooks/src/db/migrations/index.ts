import { outboxMigration } from '@crm/events';
import { webhooksMigration } from './0001_webhooks.ts';

/** Webhooks migrations in order; append only. */
export const migrations = [outboxMigration, webhooksMigration];

import { outboxMigration } from '@crm/events';
import { idempotencyMigration } from '@crm/idempotency';
import { webhooksMigration } from './0001_webhooks.ts';
import { m0002InputBounds } from './0002_input_bounds.ts';
import { m0003EventsFeed } from './0003_events_feed.ts';

/** Webhooks migrations in order; append only. */
export const migrations = [outboxMigration, webhooksMigration, m0002InputBounds, m0003EventsFeed, idempotencyMigration];

import { outboxMigration } from '@crm/events';
import { idempotencyMigration } from '@crm/idempotency';
import { m0001Users } from './0001_users.ts';
import { m0002Contacts } from './0002_contacts.ts';
import { m0003Opportunities } from './0003_opportunities.ts';
import { m0004ContactsSearch } from './0004_contacts_search.ts';
import { m0010Orders } from './0010_orders.ts';
import { m0020InputBounds } from './0020_input_bounds.ts';
import { m0021OrdersInputBounds } from './0021_orders_input_bounds.ts';
import { m0030UsersKeyset } from './0030_users_keyset.ts';
import { m0031OrdersKeyset } from './0031_orders_keyset.ts';
import { m0032ContactCounts } from './0032_contact_counts.ts';

/** Sales migrations in order; append only. */
export const migrations = [
  outboxMigration,
  m0001Users,
  m0002Contacts,
  m0003Opportunities,
  m0004ContactsSearch,
  m0010Orders,
  m0020InputBounds,
  m0021OrdersInputBounds,
  m0030UsersKeyset,
  m0031OrdersKeyset,
  m0032ContactCounts,
  idempotencyMigration,
];

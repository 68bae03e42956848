import { type ListRequest, type PageOfIds, readPageIds } from '@crm/db';
import { type Kysely, sql } from 'kysely';
import type { WebhooksDatabase } from '../db/database.ts';
import { TEST_EVENT_TYPE } from './model.ts';

type Db = Kysely<WebhooksDatabase>;

export interface FeedFilters {
  /** Only these types (known, never `webhook.test`). */
  types?: string[];
  /** Only events whose timestamp is at or after this instant. */
  since?: Date;
}

export interface FeedRow {
  id: string;
  type: string;
  occurred_at: Date;
  data: unknown;
  seq: number;
}

/**
 * One page of the tenant's feed (page or cursor mode) in stream order, and its rows. Only events
 * at or below the watermark are listed, so a walk never passes an event stored later. The list
 * module walks `(sort, id)` keys over a table with a numeric id; here the key is the stream
 * sequence, so the walked relation presents `seq` as its `id` (and sorts on it).
 */
export async function listFeedEvents(
  db: Db,
  tenantId: string,
  watermark: number,
  filters: FeedFilters,
  request: ListRequest,
): Promise<{ page: PageOfIds; rows: FeedRow[] }> {
  let events = db.selectFrom('events').where('tenant_id', '=', tenantId).where('seq', '<=', watermark).where('type', '<>', TEST_EVENT_TYPE);
  if (filters.types) events = events.where('type', 'in', filters.types);
  if (filters.since) events = events.where('occurred_at', '>=', filters.since);
  const feed = db.selectFrom(events.select(sql<number>`seq`.as('id')).as('f'));
  const page = await readPageIds(feed, 'f', request.window);
  if (page.ids.length === 0) return { page, rows: [] };
  const rows = (await db
    .selectFrom('events')
    .select(['id', 'type', 'occurred_at', 'data', 'seq'])
    .where('tenant_id', '=', tenantId)
    .where('seq', 'in', page.ids)
    .execute()) as FeedRow[];
  const bySeq = new Map(rows.map((row) => [Number(row.seq), row]));
  return { page, rows: page.ids.flatMap((seq) => bySeq.get(seq) ?? []) };
}

/** The tenant's event with this id, unless it is a `webhook.test` event. */
export function findFeedEvent(db: Db, tenantId: string, id: string) {
  return db
    .selectFrom('events')
    .select(['id', 'type', 'occurred_at', 'data'])
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('type', '<>', TEST_EVENT_TYPE)
    .executeTakeFirst();
}

import { type ListRequest, type PageOfIds, preparedStatement, readPageIds, type SortType, tenantRowsByIds } from '@crm/db';
import { type Kysely, sql } from 'kysely';
import type { SalesDatabase } from '../db/database.ts';

type Db = Kysely<SalesDatabase>;

export interface OpportunityFilters {
  enterprise_id?: number;
  status?: string;
  q?: string;
}

/** Columns an opportunity write may set. */
export interface OpportunityColumns {
  name?: string;
  enterprise_id?: number;
  user_id?: number | null;
  amount?: number;
  currency?: string;
  status?: string;
  probability?: number | null;
  close_date?: string | null;
  comments?: string | null;
  extra_fields?: Record<string, unknown> | null;
}

const COLUMNS = [
  'id',
  'name',
  'enterprise_id',
  'user_id',
  'amount',
  'currency',
  'status',
  'probability',
  'close_date',
  'comments',
  'extra_fields',
  'created_at',
  'updated_at',
] as const;

function filtered(db: Db, tenantId: string, filters: OpportunityFilters, updatedSince?: Date) {
  let query = db.selectFrom('opportunities').where('opportunities.tenant_id', '=', tenantId);
  if (filters.enterprise_id !== undefined) query = query.where('opportunities.enterprise_id', '=', filters.enterprise_id);
  if (filters.status !== undefined) query = query.where('opportunities.status', '=', filters.status);
  if (updatedSince) query = query.where('opportunities.updated_at', '>=', updatedSince);
  if (filters.q !== undefined && filters.q !== '')
    query = query.where('opportunities.name', 'ilike', `%${filters.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  return query;
}

function rowsQuery(db: Db, tenantId: string, ids: number[]) {
  return db.selectFrom('opportunities').select(COLUMNS).where('tenant_id', '=', tenantId).where('id', 'in', ids).orderBy('id');
}

export type OpportunityRow = Awaited<ReturnType<ReturnType<typeof rowsQuery>['execute']>>[number];

/**
 * Rows of these opportunity ids in the tenant, in id order (every read and list page, and the
 * answer of every write): a named prepared statement whose generic plan is kept
 * (`tenantRowsByIds`). Sent as text with an IN list, it was planned on every call.
 */
export const OPPORTUNITIES_BY_IDS = preparedStatement<OpportunityRow>(
  `${tenantRowsByIds('opportunities', COLUMNS.join(', '), 'o')} order by o.id`,
);

/** Rows of these opportunity ids in the tenant; `lock` holds them (taken in id order) until the transaction ends. */
export async function findOpportunityRows(db: Db, tenantId: string, ids: number[], { lock = false } = {}): Promise<OpportunityRow[]> {
  if (ids.length === 0) return [];
  if (lock) return rowsQuery(db, tenantId, ids).forUpdate().execute();
  return (await OPPORTUNITIES_BY_IDS.execute(db, [tenantId, ids])).rows;
}

/** The sortable fields of the opportunity list and their column types (cursors cast their keys back with them). */
export const OPPORTUNITY_SORTS = {
  id: 'integer',
  name: 'text',
  created_at: 'timestamptz',
  updated_at: 'timestamptz',
} as const satisfies Record<string, SortType>;

/**
 * The ids of one page of the tenant's opportunities (page mode counts, cursor mode walks the
 * keyset), in list order. Each sort has its `(tenant_id, field, id)` index and each equality filter
 * its `(tenant_id, filter, id)` one (0003).
 */
export function listOpportunityIds(db: Db, tenantId: string, filters: OpportunityFilters, request: ListRequest): Promise<PageOfIds> {
  return readPageIds(filtered(db, tenantId, filters, request.updatedSince), 'opportunities', request.window);
}

function columnValues(columns: OpportunityColumns) {
  const { extra_fields, ...rest } = columns;
  return {
    ...rest,
    ...(extra_fields === undefined ? {} : { extra_fields: extra_fields === null ? null : JSON.stringify(extra_fields) }),
  };
}

/** Inserts opportunities of one tenant; ids in input order. */
export async function insertOpportunities(
  db: Db,
  tenantId: string,
  rows: (OpportunityColumns & { name: string; enterprise_id: number })[],
): Promise<number[]> {
  const inserted = await db
    .insertInto('opportunities')
    .values(rows.map((r) => ({ ...columnValues(r), tenant_id: tenantId, name: r.name, enterprise_id: r.enterprise_id })))
    .returning('id')
    .execute();
  return inserted.map((r) => r.id);
}

/** Updates the given columns and updated_at; false when the opportunity is not in the tenant. */
export async function updateOpportunityColumns(db: Db, tenantId: string, id: number, columns: OpportunityColumns): Promise<boolean> {
  const result = await db
    .updateTable('opportunities')
    .set({ ...columnValues(columns), updated_at: sql`now()` })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Deletes an opportunity of the tenant; false when it is not there. */
export async function deleteOpportunityRow(db: Db, tenantId: string, id: number): Promise<boolean> {
  const result = await db.deleteFrom('opportunities').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Whether the opportunity exists in the tenant. */
export async function opportunityExists(db: Db, tenantId: string, id: number): Promise<boolean> {
  const row = await db.selectFrom('opportunities').select('id').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return row !== undefined;
}

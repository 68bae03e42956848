import type { Opportunity } from '@crm/contracts';
import { inIdOrder, inTransaction, type ListRequest, listPagination } from '@crm/db';
import { writeEvent, writeEvents } from '@crm/events';
import { assertIfMatch, notFound, throwIfInvalid } from '@crm/http';
import type { Kysely } from 'kysely';
import type { SalesDatabase } from '../db/database.ts';
import type { OpportunityCreate, OpportunityUpdate } from './model.ts';
import {
  deleteOpportunityRow,
  findOpportunityRows,
  insertOpportunities,
  listOpportunityIds,
  type OpportunityColumns,
  type OpportunityFilters,
  type OpportunityRow,
  updateOpportunityColumns,
} from './repo.ts';
import { opportunityRuleErrors } from './rules.ts';

type Db = Kysely<SalesDatabase>;

const PLAIN_FIELDS = ['name', 'currency', 'status', 'probability', 'close_date', 'comments', 'extra_fields'] as const;

/** Maps a stored opportunity row to the API shape. */
export function presentOpportunity(row: OpportunityRow): Opportunity {
  return {
    id: row.id,
    name: row.name,
    enterprise_id: row.enterprise_id,
    user_id: row.user_id,
    amount: Number(row.amount),
    currency: row.currency,
    status: row.status as Opportunity['status'],
    probability: row.probability,
    close_date: row.close_date,
    comments: row.comments,
    extra_fields: row.extra_fields,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

/** The columns a request sets: only fields it carries; identifier and e-mail become ids. */
function columnsOf(input: OpportunityUpdate, enterpriseId: number | undefined, userIds: Map<string, number>): OpportunityColumns {
  const columns: OpportunityColumns = Object.fromEntries(PLAIN_FIELDS.filter((f) => input[f] !== undefined).map((f) => [f, input[f]]));
  if (input.amount !== undefined) columns.amount = Math.round(input.amount * 100) / 100;
  if (enterpriseId !== undefined) columns.enterprise_id = enterpriseId;
  if (input.user_email !== undefined)
    columns.user_id = input.user_email === null ? null : (userIds.get(input.user_email.toLowerCase()) ?? null);
  return columns;
}

async function loadOpportunities(db: Db, tenantId: string, ids: number[]): Promise<Opportunity[]> {
  const byId = new Map((await findOpportunityRows(db, tenantId, ids)).map((row) => [row.id, presentOpportunity(row)]));
  return ids.map((id) => byId.get(id)).filter((o): o is Opportunity => o !== undefined);
}

/** The opportunity with this id in the tenant, or 404. */
export async function getOpportunity(db: Db, tenantId: string, id: number): Promise<Opportunity> {
  const [opportunity] = await loadOpportunities(db, tenantId, [id]);
  if (!opportunity) throw notFound('Opportunity');
  return opportunity;
}

/** One page of the tenant's opportunities (page or cursor mode, contract §22) with its pagination object. */
export async function listOpportunities(db: Db, tenantId: string, filters: OpportunityFilters, request: ListRequest) {
  const page = await listOpportunityIds(db, tenantId, filters, request);
  const rows = await findOpportunityRows(db, tenantId, page.ids);
  return { data: inIdOrder(rows, page.ids).map(presentOpportunity), pagination: listPagination(page, request) };
}

/**
 * Locks the opportunity's row until the transaction ends and checks `If-Match` (contract §24)
 * against it as the API presents it: a concurrent writer with the same ETag waits here, then
 * sees the new version and gets 412. 404 when it is not in the tenant.
 */
async function lockForWrite(trx: Db, tenantId: string, id: number, ifMatch: string | undefined): Promise<void> {
  const [row] = await findOpportunityRows(trx, tenantId, [id], { lock: true });
  if (!row) throw notFound('Opportunity');
  assertIfMatch(ifMatch, presentOpportunity(row));
}

/** Creates opportunities all or nothing, with one `opportunity.created` event each, in one transaction. */
export async function createOpportunities(
  db: Db,
  tenantId: string,
  inputs: OpportunityCreate[],
  prefixOf: (index: number) => string,
): Promise<Opportunity[]> {
  const items = inputs.map((body, index) => ({ body, prefix: prefixOf(index) }));
  const { details, enterpriseIds, userIds } = await opportunityRuleErrors(db, tenantId, items);
  throwIfInvalid(details);
  return inTransaction(db, async (trx) => {
    const rows = inputs.map((input, index) => ({
      ...columnsOf(input, enterpriseIds[index], userIds),
      name: input.name,
      enterprise_id: enterpriseIds[index] as number,
    }));
    const opportunities = await loadOpportunities(trx, tenantId, await insertOpportunities(trx, tenantId, rows));
    await writeEvents(
      trx,
      opportunities.map((data) => ({ tenantId, type: 'opportunity.created' as const, data })),
    );
    return opportunities;
  });
}

/**
 * Partial update (PUT and PATCH): omitted fields are kept, null clears a nullable field. With
 * `ifMatch`, only when it matches the current ETag (else 412, nothing written).
 */
export async function updateOpportunity(
  db: Db,
  tenantId: string,
  id: number,
  input: OpportunityUpdate,
  ifMatch?: string,
): Promise<Opportunity> {
  await getOpportunity(db, tenantId, id);
  const { details, enterpriseIds, userIds } = await opportunityRuleErrors(db, tenantId, [{ body: input, prefix: '' }]);
  throwIfInvalid(details);
  return inTransaction(db, async (trx) => {
    await lockForWrite(trx, tenantId, id, ifMatch);
    if (!(await updateOpportunityColumns(trx, tenantId, id, columnsOf(input, enterpriseIds[0], userIds)))) throw notFound('Opportunity');
    const opportunity = await getOpportunity(trx, tenantId, id);
    await writeEvent(trx, { tenantId, type: 'opportunity.updated', data: opportunity });
    return opportunity;
  });
}

/** Deletes the opportunity and writes `opportunity.deleted` { id } in the same transaction; `ifMatch` as for updates. */
export async function deleteOpportunity(db: Db, tenantId: string, id: number, ifMatch?: string): Promise<void> {
  await inTransaction(db, async (trx) => {
    await lockForWrite(trx, tenantId, id, ifMatch);
    if (!(await deleteOpportunityRow(trx, tenantId, id))) throw notFound('Opportunity');
    await writeEvent(trx, { tenantId, type: 'opportunity.deleted', data: { id } });
  });
}

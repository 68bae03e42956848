import { inIdOrder, type ListRequest, type PageOfIds, preparedStatement, readPageIds } from '@crm/db';
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { AuditLogsTable, GatewayDatabase } from '../db/database.ts';

export interface AuditFilter {
  from?: Date;
  to?: Date;
  status?: number;
  method?: string;
  path?: string;
}

/**
 * One page of a tenant's audit records matching the filter (contract §9, §22), by occurred_at then
 * id: page mode counts the filtered records, cursor mode continues after a position without
 * counting. The page's ids are walked on the (tenant_id, occurred_at, id) index; only they are read in full.
 */
export async function listAuditLogs(
  db: Kysely<GatewayDatabase>,
  tenantId: string,
  request: ListRequest,
  filter: AuditFilter,
): Promise<{ page: PageOfIds; rows: ReturnType<typeof presented>[] }> {
  let query = db.selectFrom('audit_logs as a').where('a.tenant_id', '=', tenantId);
  if (filter.from) query = query.where('a.occurred_at', '>=', filter.from);
  if (filter.to) query = query.where('a.occurred_at', '<', filter.to);
  if (filter.status !== undefined) query = query.where('a.status', '=', filter.status);
  if (filter.method) query = query.where('a.method', '=', filter.method);
  if (filter.path?.endsWith('*')) query = query.where('a.path', 'like', `${filter.path.slice(0, -1).replace(/[\\%_]/g, '\\$&')}%`);
  else if (filter.path) query = query.where('a.path', '=', filter.path);
  const page = await readPageIds(query, 'a', request.window);
  if (page.ids.length === 0) return { page, rows: [] };
  const rows = await db
    .selectFrom('audit_logs')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', page.ids.map(String))
    .execute();
  return { page, rows: inIdOrder(rows.map(presented), page.ids) };
}

function presented(row: Selectable<AuditLogsTable>) {
  return { ...row, id: Number(row.id), occurred_at: row.occurred_at.toISOString(), duration_ms: Number(row.duration_ms) };
}

/** The batch insert: one named prepared statement over column arrays (`unnest`). */
const INSERT_AUDIT_ENTRIES = preparedStatement(`insert into audit_logs (occurred_at, request_id, tenant_id, key_id, method,
    path, query, status, duration_ms, client_ip, user_agent, idempotency_key, replayed, error_type)
  select * from unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
    $8::integer[], $9::float8[], $10::text[], $11::text[], $12::text[], $13::boolean[], $14::text[])`);

/**
 * Inserts a batch of audit entries as ONE statement over column arrays (`unnest`): the
 * statement text and its 14 parameters stay the same whatever the batch size, and each
 * connection plans it once (a named prepared statement), so a small batch costs little more per
 * entry than a large one.
 */
export async function insertAuditEntries(db: Kysely<GatewayDatabase>, entries: Insertable<AuditLogsTable>[]): Promise<void> {
  const column = <T>(pick: (e: Insertable<AuditLogsTable>) => T | null | undefined) => entries.map((e) => pick(e) ?? null);
  await INSERT_AUDIT_ENTRIES.execute(db, [
    column((e) => e.occurred_at.toISOString()),
    column((e) => e.request_id),
    column((e) => e.tenant_id),
    column((e) => e.key_id),
    column((e) => e.method),
    column((e) => e.path),
    column((e) => e.query),
    column((e) => e.status),
    column((e) => e.duration_ms),
    column((e) => e.client_ip),
    column((e) => e.user_agent),
    column((e) => e.idempotency_key),
    column((e) => e.replayed ?? false),
    column((e) => e.error_type),
  ]);
}

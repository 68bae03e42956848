import { fetchPage, type PageRequest } from '@crm/db';
import { type Insertable, type Kysely, sql } from 'kysely';
import type { AuditLogsTable, GatewayDatabase } from '../db/database.ts';

export interface AuditFilter {
  from?: Date;
  to?: Date;
  status?: number;
  method?: string;
  path?: string;
}

/** One page of a tenant's audit records matching the filter (ordered by occurred_at, then id), with the total count. */
export async function listAuditLogs(db: Kysely<GatewayDatabase>, tenantId: string, page: PageRequest, filter: AuditFilter) {
  let query = db.selectFrom('audit_logs').where('tenant_id', '=', tenantId);
  if (filter.from) query = query.where('occurred_at', '>=', filter.from);
  if (filter.to) query = query.where('occurred_at', '<', filter.to);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.method) query = query.where('method', '=', filter.method);
  if (filter.path?.endsWith('*')) query = query.where('path', 'like', `${filter.path.slice(0, -1).replace(/[\\%_]/g, '\\$&')}%`);
  else if (filter.path) query = query.where('path', '=', filter.path);
  const { total, rows } = await fetchPage(query, page, (q) => q.selectAll());
  return {
    total,
    rows: rows.map((r) => ({ ...r, id: Number(r.id), occurred_at: r.occurred_at.toISOString(), duration_ms: Number(r.duration_ms) })),
  };
}

/**
 * Inserts a batch of audit entries as ONE statement over column arrays (`unnest`): the
 * statement text and its 14 parameters stay the same size whatever the batch size, so building
 * it costs the gateway's event loop next to nothing.
 */
export async function insertAuditEntries(db: Kysely<GatewayDatabase>, entries: Insertable<AuditLogsTable>[]): Promise<void> {
  const column = <T>(pick: (e: Insertable<AuditLogsTable>) => T | null | undefined) => entries.map((e) => pick(e) ?? null);
  await sql`insert into audit_logs (occurred_at, request_id, tenant_id, key_id, method, path, query, status, duration_ms,
      client_ip, user_agent, idempotency_key, replayed, error_type)
    select * from unnest(
      ${column((e) => e.occurred_at.toISOString())}::timestamptz[],
      ${column((e) => e.request_id)}::text[], ${column((e) => e.tenant_id)}::text[], ${column((e) => e.key_id)}::text[],
      ${column((e) => e.method)}::text[], ${column((e) => e.path)}::text[], ${column((e) => e.query)}::text[],
      ${column((e) => e.status)}::integer[], ${column((e) => e.duration_ms)}::float8[], ${column((e) => e.client_ip)}::text[],
      ${column((e) => e.user_agent)}::text[], ${column((e) => e.idempotency_key)}::text[],
      ${column((e) => e.replayed ?? false)}::boolean[], ${column((e) => e.error_type)}::text[])`.execute(db);
}

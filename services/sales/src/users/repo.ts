import { inIdOrder, type ListRequest, type PageOfIds, preparedStatement, readPageIds } from '@crm/db';
import { type Kysely, sql } from 'kysely';
import type { SalesDatabase } from '../db/database.ts';

type Db = Kysely<SalesDatabase>;

/** Inserts a user, or renames the existing one with that e-mail (case-insensitive). */
export async function upsertUser(db: Db, tenantId: string, email: string, name: string) {
  const { rows } = await sql<{ id: number; email: string; name: string }>`
    insert into users (tenant_id, email, name) values (${tenantId}, ${email}, ${name})
    on conflict (tenant_id, lower(email)) do update set name = excluded.name, updated_at = now()
    returning id, email, name`.execute(db);
  return rows[0] as { id: number; email: string; name: string };
}

/** The user with this e-mail in the tenant (case-insensitive), or undefined. */
export function findUserByEmail(db: Db, tenantId: string, email: string) {
  return db
    .selectFrom('users')
    .select(['id', 'email', 'name'])
    .where('tenant_id', '=', tenantId)
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
}

/**
 * The users behind these e-mails (any case), as a named prepared statement: every contact and
 * opportunity write that names users checks them. Each e-mail is one lookup in the unique
 * (tenant_id, lower(email)) index (LATERAL, fenced by OFFSET 0), the only plan whatever the
 * table's size; the e-mails come through a scalar subquery, so PostgreSQL keeps the generic plan
 * instead of planning every call (see `contactRowsByIds`).
 */
export const USERS_BY_EMAILS = preparedStatement<{ id: number; email: string; name: string }>(
  `select u.id, u.email, u.name from (select distinct unnest((select $2::text[])) as email) as wanted
  cross join lateral (select id, email, name from users where tenant_id = $1 and lower(email) = wanted.email offset 0) as u`,
);

/** Users with any of these e-mails in the tenant, each once. */
export async function findUsersByEmails(db: Db, tenantId: string, emails: string[]) {
  if (emails.length === 0) return [];
  return (await USERS_BY_EMAILS.execute(db, [tenantId, emails.map((e) => e.toLowerCase())])).rows;
}

/**
 * One page of the tenant's users (contract §4 page mode, §22 cursor mode): the page's ids walked
 * on a tenant-leading (sort, id) index, then those users read by id.
 */
export async function listUsers(db: Db, tenantId: string, request: ListRequest): Promise<{ page: PageOfIds; rows: AccountUserRow[] }> {
  let query = db.selectFrom('users').where('users.tenant_id', '=', tenantId);
  if (request.updatedSince) query = query.where('users.updated_at', '>=', request.updatedSince);
  const page = await readPageIds(query, 'users', request.window);
  if (page.ids.length === 0) return { page, rows: [] };
  const rows = await db
    .selectFrom('users')
    .select(['id', 'name', 'email'])
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', page.ids)
    .execute();
  return { page, rows: inIdOrder(rows, page.ids) };
}

/** A user as the API lists it. */
export interface AccountUserRow {
  id: number;
  name: string;
  email: string;
}

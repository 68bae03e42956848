import { fetchPage, type PageRequest } from '@crm/db';
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

/** Users with any of these e-mails in the tenant. */
export function findUsersByEmails(db: Db, tenantId: string, emails: string[]) {
  if (emails.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('users')
    .select(['id', 'email', 'name'])
    .where('tenant_id', '=', tenantId)
    .where(
      sql<string>`lower(email)`,
      'in',
      emails.map((e) => e.toLowerCase()),
    )
    .execute();
}

/** One page of the tenant's users and the total count. */
export async function listUsers(db: Db, tenantId: string, page: PageRequest) {
  let query = db.selectFrom('users').where('tenant_id', '=', tenantId);
  if (page.updatedSince) query = query.where('updated_at', '>=', page.updatedSince);
  return fetchPage(query, page, (q) => q.select(['id', 'name', 'email']));
}

import { preparedStatement } from '@crm/db';
import type { Kysely } from 'kysely';
import type { SalesDatabase } from '../db/database.ts';

const MAX_ID = 2_147_483_647; // ids are Postgres `integer`

/**
 * The id of the contact an `{identifier}` designates inside one tenant (contract §11), as one SQL
 * expression over the parameters $1 (tenant), $2 (the identifier as an id, or null) and $3 (the
 * identifier): an all-digit identifier naming an existing id wins; else the lowest-id exact
 * `name`; else the lowest-id `email` (case-insensitive); else the lowest-id `cif`; else null.
 * COALESCE evaluates its arguments in order and stops at the first that is not null, so an id that
 * exists costs one index probe and each later rule runs only when every earlier one found
 * nothing; each probe walks a tenant-leading index.
 */
export const IDENTIFIED_CONTACT_ID = `coalesce(
  (select k.id from contacts k where k.tenant_id = $1 and k.id = $2::integer),
  (select k.id from contacts k where k.tenant_id = $1 and k.name = $3 order by k.id limit 1),
  (select k.id from contacts k where k.tenant_id = $1 and lower(k.email) = lower($3) order by k.id limit 1),
  (select k.id from contacts k where k.tenant_id = $1 and k.cif = $3 order by k.id limit 1))`;

/** The parameters $1..$3 of IDENTIFIED_CONTACT_ID for a tenant and an identifier. */
export function identifierParameters(tenantId: string, identifier: string): [string, number | null, string] {
  const asId = /^\d+$/.test(identifier) && Number(identifier) <= MAX_ID ? Number(identifier) : null;
  return [tenantId, asId, identifier];
}

const RESOLVE = preparedStatement<{ id: number | null }>(`select ${IDENTIFIED_CONTACT_ID} as id`);

/** Resolves a contact `{identifier}` inside one tenant (contract §11) to its id; undefined when none matches. */
export async function resolveContactIdentifier(
  db: Kysely<SalesDatabase>,
  tenantId: string,
  identifier: string,
): Promise<number | undefined> {
  const { rows } = await db.executeQuery(RESOLVE.compile(identifierParameters(tenantId, identifier)));
  return rows[0]?.id ?? undefined;
}

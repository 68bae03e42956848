import { preparedStatement } from '@crm/db';
import type { Kysely } from 'kysely';
import type { SalesDatabase } from '../db/database.ts';

type Db = Kysely<SalesDatabase>;

/** The types every tenant starts with (contract §11), in list order. */
export const DEFAULT_CONTACT_TYPES = [
  { reference: 'client', name: 'Client' },
  { reference: 'lead', name: 'Lead' },
  { reference: 'prospect', name: 'Prospect' },
  { reference: 'supplier', name: 'Supplier' },
  { reference: 'partner', name: 'Partner' },
] as const;

/**
 * The tenant's types in list order: a named prepared statement, since every contact write checks
 * its `type` against them (67–77 → 43–47 µs of PostgreSQL CPU, `loadtest/statement-cost.ts`).
 */
const TENANT_TYPES = preparedStatement<{ id: number; reference: string; name: string }>(
  'select id, reference, name from contact_types where tenant_id = $1 order by id',
);

async function selectTypes(db: Db, tenantId: string) {
  return (await TENANT_TYPES.execute(db, [tenantId])).rows;
}

/**
 * The tenant's contact types, seeding the defaults on first use. Seeding is idempotent under
 * concurrency: the unique (tenant_id, reference) index absorbs a racing second insert.
 */
export async function tenantContactTypes(db: Db, tenantId: string) {
  const types = await selectTypes(db, tenantId);
  if (types.length > 0) return types;
  await db
    .insertInto('contact_types')
    .values(DEFAULT_CONTACT_TYPES.map((type) => ({ tenant_id: tenantId, ...type })))
    .onConflict((oc) => oc.columns(['tenant_id', 'reference']).doNothing())
    .execute();
  return selectTypes(db, tenantId);
}

/** The subset of `references` that are not contact types of the tenant. */
export async function unknownContactTypes(db: Db, tenantId: string, references: string[]): Promise<Set<string>> {
  if (references.length === 0) return new Set();
  const known = new Set((await tenantContactTypes(db, tenantId)).map((type) => type.reference));
  return new Set(references.filter((reference) => !known.has(reference)));
}

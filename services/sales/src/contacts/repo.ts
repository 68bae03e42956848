import { type ListRequest, type ListTotal, type PageOfIds, type PreparedStatement, preparedStatement, readPageIds } from '@crm/db';
import { type Kysely, sql } from 'kysely';
import { jsonArrayFrom, jsonObjectFrom } from 'kysely/helpers/postgres';
import type { SalesDatabase } from '../db/database.ts';
import { IDENTIFIED_CONTACT_ID, identifierParameters } from './identifier.ts';
import type { LocationInput } from './model.ts';

type Db = Kysely<SalesDatabase>;

export interface ContactFilters {
  q?: string;
  type?: string;
  email?: string;
  cif?: string;
}

/** Scalar columns a contact write may set. */
export interface ContactColumns {
  name?: string;
  type?: string;
  email?: string | null;
  is_person?: boolean | null;
  cif?: string | null;
  phone?: string | null;
  web?: string | null;
  iban?: string | null;
  comments?: string | null;
  extra_fields?: Record<string, unknown> | null;
}

/**
 * The contact columns a full row carries, named rather than `contacts.*`: a prepared statement
 * whose result columns would change when a migration adds one fails until its connection closes.
 */
const CONTACT_COLUMNS = [
  'id',
  'tenant_id',
  'name',
  'type',
  'email',
  'is_person',
  'cif',
  'phone',
  'web',
  'iban',
  'comments',
  'extra_fields',
  'created_at',
  'updated_at',
] as const;

const LOCATION_COLUMNS = ['primary', 'direction', 'city', 'postal', 'country', 'latitude', 'longitude', 'extra_info'] as const;

/** `%`, `_` and `\` match literally inside an ILIKE pattern. */
function likePattern(value: string): string {
  return `%${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

function filteredContacts(db: Db, tenantId: string, filters: ContactFilters, updatedSince?: Date) {
  let query = db.selectFrom('contacts').where('contacts.tenant_id', '=', tenantId);
  if (filters.type !== undefined) query = query.where('contacts.type', '=', filters.type);
  if (filters.email !== undefined) query = query.where(sql<string>`lower(contacts.email)`, '=', sql<string>`lower(${filters.email})`);
  if (filters.cif !== undefined) query = query.where('contacts.cif', '=', filters.cif);
  if (updatedSince) query = query.where('contacts.updated_at', '>=', updatedSince);
  if (filters.q !== undefined && filters.q !== '') {
    const pattern = likePattern(filters.q);
    query = query.where((eb) =>
      eb.or([eb('contacts.name', 'ilike', pattern), eb('contacts.email', 'ilike', pattern), eb('contacts.cif', 'ilike', pattern)]),
    );
  }
  return query;
}

/** Full contact rows (with location and users as JSON) of a query already joined on `contacts`. */
function selectContactRows(db: Db) {
  return db
    .selectFrom('contacts')
    .select(CONTACT_COLUMNS.map((c) => `contacts.${c}` as const))
    .select((eb) => [
      jsonObjectFrom(
        eb
          .selectFrom('contact_locations')
          .select(['contact_locations.id', ...LOCATION_COLUMNS.map((c) => `contact_locations.${c}` as const)])
          .whereRef('contact_locations.contact_id', '=', 'contacts.id'),
      ).as('location'),
      // Each user by its primary key (LATERAL, fenced by OFFSET 0): a hash join here made the
      // generic plan of the prepared reads scan every user of every tenant per contact (30,000
      // users: 331 pages, 7.4 ms per contact, measured) once the table had grown past the size
      // the plan was made for (tests/sales-prepared-plans.test.ts).
      jsonArrayFrom(
        eb
          .selectFrom('contact_users')
          .innerJoinLateral(
            (lateral) =>
              lateral
                .selectFrom('users')
                .select(['users.id', 'users.name', 'users.email'])
                .whereRef('users.id', '=', 'contact_users.user_id')
                .offset(sql.lit(0))
                .as('user'),
            (join) => join.onTrue(),
          )
          .select(['user.id', 'user.name', 'user.email'])
          .whereRef('contact_users.contact_id', '=', 'contacts.id')
          .orderBy('contact_users.position'),
      ).as('users'),
    ]);
}

export type ContactRow = Awaited<ReturnType<ReturnType<typeof selectContactRows>['executeTakeFirstOrThrow']>>;

/**
 * Full rows by id, compiled once and sent as a named prepared statement like the read by
 * identifier (planning the location and users subqueries costs more than running them for a
 * page of 15). Parameters: $1 tenant, $2 the ids as an integer array.
 *
 * Each id is looked up on its own (a LATERAL subquery per id, fenced by OFFSET 0 so the planner
 * cannot merge it into a join): PostgreSQL switches a prepared statement to a generic plan after
 * a few executions, and the generic plan of `tenant_id = $1 and id = any($2)` walked the
 * tenant's index and filtered on id, reading every contact of the tenant (the keyed create's
 * read-back grew from 0.5 to 4.3 ms within 5,000 contacts, measured). Per id, the only plan is
 * one index lookup on (tenant_id, id), whatever the table's statistics.
 *
 * The ids come through a scalar subquery, `unnest((select $2::integer[]))`, which the planner
 * cannot look into: it then estimates the same number of ids (10) whatever the array holds, so a
 * custom plan costs what the generic plan costs and PostgreSQL keeps the generic plan after its
 * fifth execution. Given the array itself, it estimated a custom plan for one id (every create's
 * and update's read-back) ten times cheaper than the generic plan and planned every call again:
 * 180–190 µs of PostgreSQL CPU per one-id read against 53–57 µs now (`loadtest/statement-cost.ts`;
 * the plan is the same per-id lookup either way).
 */
let byIds: PreparedStatement<ContactRow> | undefined;

/** The statement findContactRows sends (exported for the test that explains its generic plan). */
export function contactRowsByIds(db: Db): PreparedStatement<ContactRow> {
  byIds ??= preparedStatement<ContactRow>(
    `select "contact".* from (select distinct unnest((select $2::integer[])) as "id") as "wanted" cross join lateral (${compiledWithoutValues(
      selectContactRows(db)
        .where('contacts.tenant_id', '=', sql.raw<string>('$1'))
        .where('contacts.id', '=', sql.raw<number>('"wanted"."id"')),
    )} offset 0) as "contact"`,
  );
  return byIds;
}

/** Full rows of these contact ids in the tenant, in no particular order. */
export async function findContactRows(db: Db, tenantId: string, ids: number[]): Promise<ContactRow[]> {
  if (ids.length === 0) return [];
  return (await db.executeQuery(contactRowsByIds(db).compile([tenantId, ids]))).rows;
}

/** The SQL of a query whose only parameters are written as `$n` in raw SQL (checked). */
function compiledWithoutValues(query: { compile(): { sql: string; parameters: readonly unknown[] } }): string {
  const { sql: text, parameters } = query.compile();
  if (parameters.length > 0) throw new Error('a prepared statement must take its parameters as $n only');
  return text;
}

/**
 * The full row query of the contact an identifier designates, compiled once (the builder's work is
 * the same every time, only the values change) and sent as a named prepared statement (planning
 * its subqueries costs PostgreSQL several times what running them does). Its only parameters are
 * IDENTIFIED_CONTACT_ID's $1..$3.
 */
let byIdentifier: PreparedStatement<ContactRow> | undefined;

/**
 * The full row of the contact an `{identifier}` designates (contract §11) in ONE statement:
 * the identifier rule and the row read together; undefined when nothing matches.
 */
export async function findContactByIdentifier(db: Db, tenantId: string, identifier: string): Promise<ContactRow | undefined> {
  byIdentifier ??= preparedStatement<ContactRow>(
    compiledWithoutValues(
      selectContactRows(db)
        .where('contacts.tenant_id', '=', sql.raw<string>('$1'))
        .where('contacts.id', '=', sql.raw<number>(IDENTIFIED_CONTACT_ID)),
    ),
  );
  const { rows } = await byIdentifier.execute(db, identifierParameters(tenantId, identifier));
  return rows[0];
}

/**
 * With `q` the matches are few and found through the trigram indexes, but under ORDER BY …
 * LIMIT the planner prefers walking the sort index and filtering, which reads every row of
 * the tenant when matches are rare. `OFFSET 0` fences the filter: matches first, then sort.
 */
function pageSource(db: Db, base: ReturnType<typeof filteredContacts>, filters: ContactFilters) {
  if (filters.q === undefined || filters.q === '') return base;
  const matches = base.select(['contacts.id', 'contacts.name', 'contacts.created_at', 'contacts.updated_at']).offset(0);
  // Same alias and sort columns as `base`, so the list reader's select, order and keyset apply unchanged.
  return db.selectFrom(matches.as('contacts')) as unknown as typeof base;
}

/**
 * What page mode counts. Unfiltered, the tenant's total is the sum of its maintained partial
 * counts (`contact_counts`, migration 0032: kept exact by triggers in each write's transaction)
 * instead of a walk over every one of its index entries (10–20 ms at 100 000 contacts on the
 * 2-core dev machine). Filtered counts keep the filter's own index.
 */
function countSource(
  db: Db,
  tenantId: string,
  base: ReturnType<typeof filteredContacts>,
  filters: ContactFilters,
  request: ListRequest,
): ListTotal {
  const filtered = Object.values(filters).some((v) => v !== undefined && v !== '') || request.updatedSince !== undefined;
  if (filtered) return base;
  return async () => {
    const { rows } = await db.executeQuery(CONTACT_TOTAL.compile([tenantId]));
    return Number(rows[0]?.total ?? 0);
  };
}

/** The sum of a tenant's partial contact counts (at most 64 rows, one index range). */
const CONTACT_TOTAL = preparedStatement<{ total: string }>(
  'select coalesce(sum(n), 0)::text as total from contact_counts where tenant_id = $1',
);

/**
 * The ids of one page of contacts (contract §4 page mode, §22 cursor mode), walked on a
 * tenant-leading (sort, id) index; the caller reads only those rows in full.
 */
export function readContactPage(db: Db, tenantId: string, filters: ContactFilters, request: ListRequest): Promise<PageOfIds> {
  const base = filteredContacts(db, tenantId, filters, request.updatedSince);
  return readPageIds(countSource(db, tenantId, base, filters, request), 'contacts', request.window, pageSource(db, base, filters));
}

/** Which property a batch upsert matches contacts on (contract §23). */
export type MatchProperty = 'email' | 'cif' | 'name';

/**
 * The lowest-id contact of the tenant for each match value (e-mails given lower-cased, compared
 * with `lower(email)`), one index probe per value. Values without a match are absent.
 */
export async function findContactMatches(
  db: Db,
  tenantId: string,
  property: MatchProperty,
  values: string[],
): Promise<Map<string, number>> {
  if (values.length === 0) return new Map();
  const column = { email: sql`lower(c.email)`, cif: sql`c.cif`, name: sql`c.name` }[property];
  const { rows } = await sql<{ value: string; id: number | null }>`
    select v.value, (select c.id from contacts c where c.tenant_id = ${tenantId} and ${column} = v.value order by c.id limit 1) as id
    from unnest(${values}::text[]) as v(value)`.execute(db);
  return new Map(rows.flatMap((row) => (row.id === null ? [] : [[row.value, row.id] as const])));
}

/**
 * Transaction-scoped advisory locks on 64-bit keys, taken in the given order (callers sort
 * them, so two transactions asking for overlapping keys queue instead of deadlocking).
 */
export async function lockKeys(db: Db, keys: bigint[]): Promise<void> {
  if (keys.length === 0) return;
  await sql`select pg_advisory_xact_lock(k) from unnest(${keys.map(String)}::bigint[]) as k`.execute(db);
}

/** Locks these contacts of the tenant for the transaction (in id order); returns the ids still there. */
export async function lockContactRows(db: Db, tenantId: string, ids: number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .selectFrom('contacts')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', ids)
    .orderBy('id')
    .forUpdate()
    .execute();
  return rows.map((row) => row.id);
}

function columnValues(columns: ContactColumns) {
  const { extra_fields, ...rest } = columns;
  return {
    ...rest,
    ...(extra_fields === undefined ? {} : { extra_fields: extra_fields === null ? null : JSON.stringify(extra_fields) }),
  };
}

/** Inserts contacts of one tenant and returns their ids in input order. */
export async function insertContacts(db: Db, tenantId: string, contacts: (ContactColumns & { name: string; type: string })[]) {
  const rows = await db
    .insertInto('contacts')
    .values(contacts.map((c) => ({ ...columnValues(c), tenant_id: tenantId, name: c.name, type: c.type })))
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/** Updates the given columns (and updated_at); false when the contact is not in the tenant. */
export async function updateContactColumns(db: Db, tenantId: string, id: number, columns: ContactColumns): Promise<boolean> {
  const result = await db
    .updateTable('contacts')
    .set({ ...columnValues(columns), updated_at: sql`now()` })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Creates the contact's location or merges the given fields into the existing one. */
export async function mergeLocation(db: Db, contactId: number, location: LocationInput): Promise<void> {
  const given = Object.fromEntries(LOCATION_COLUMNS.filter((c) => location[c] !== undefined).map((c) => [c, location[c]]));
  await db
    .insertInto('contact_locations')
    .values({ contact_id: contactId, ...given })
    .onConflict((oc) => {
      const target = oc.column('contact_id');
      if (Object.keys(given).length === 0) return target.doNothing();
      return target.doUpdateSet(Object.fromEntries(Object.keys(given).map((c) => [c, sql.ref(`excluded.${c}`)])));
    })
    .execute();
}

/** Removes the contact's location. */
export async function deleteLocation(db: Db, contactId: number): Promise<void> {
  await db.deleteFrom('contact_locations').where('contact_id', '=', contactId).execute();
}

/** Assigns users to a contact that has none (a new one), in the given order. */
export async function insertContactUsers(db: Db, contactId: number, userIds: number[]): Promise<void> {
  if (userIds.length === 0) return;
  await db
    .insertInto('contact_users')
    .values(userIds.map((userId, position) => ({ contact_id: contactId, user_id: userId, position })))
    .execute();
}

/** Replaces the contact's assigned users, keeping the given order. */
export async function replaceContactUsers(db: Db, contactId: number, userIds: number[]): Promise<void> {
  await db.deleteFrom('contact_users').where('contact_id', '=', contactId).execute();
  await insertContactUsers(db, contactId, userIds);
}

/** Deletes a contact of the tenant; false when it is not there. */
export async function deleteContactRow(db: Db, tenantId: string, id: number): Promise<boolean> {
  const result = await db.deleteFrom('contacts').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

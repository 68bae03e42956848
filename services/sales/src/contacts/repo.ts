import { type PageRequest, pageWindow } from '@crm/db';
import { type Kysely, sql } from 'kysely';
import { jsonArrayFrom, jsonObjectFrom } from 'kysely/helpers/postgres';
import type { SalesDatabase } from '../db/database.ts';
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
    .selectAll('contacts')
    .select((eb) => [
      jsonObjectFrom(
        eb
          .selectFrom('contact_locations')
          .select(['contact_locations.id', ...LOCATION_COLUMNS.map((c) => `contact_locations.${c}` as const)])
          .whereRef('contact_locations.contact_id', '=', 'contacts.id'),
      ).as('location'),
      jsonArrayFrom(
        eb
          .selectFrom('contact_users')
          .innerJoin('users', 'users.id', 'contact_users.user_id')
          .select(['users.id', 'users.name', 'users.email'])
          .whereRef('contact_users.contact_id', '=', 'contacts.id')
          .orderBy('contact_users.position'),
      ).as('users'),
    ]);
}

export type ContactRow = Awaited<ReturnType<ReturnType<typeof selectContactRows>['executeTakeFirstOrThrow']>>;

/** Full rows of these contact ids in the tenant, ordered by id. */
export function findContactRows(db: Db, tenantId: string, ids: number[]): Promise<ContactRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return selectContactRows(db).where('contacts.tenant_id', '=', tenantId).where('contacts.id', 'in', ids).orderBy('contacts.id').execute();
}

/**
 * With `q` the matches are few and found through the trigram indexes, but under ORDER BY …
 * LIMIT the planner prefers walking the sort index and filtering, which reads every row of
 * the tenant when matches are rare. `OFFSET 0` fences the filter: matches first, then sort.
 */
function pageSource(db: Db, base: ReturnType<typeof filteredContacts>, filters: ContactFilters) {
  if (filters.q === undefined || filters.q === '') return base;
  const matches = base.select(['contacts.id', 'contacts.name', 'contacts.created_at', 'contacts.updated_at']).offset(0);
  // Same alias and sort columns as `base`, so the caller's select/order apply unchanged.
  return db.selectFrom(matches.as('contacts')) as unknown as typeof base;
}

/**
 * One page of contacts and the filtered total. A deferred join: the page's ids come from an
 * index-only walk of a tenant-leading index, and only those rows are read in full; pages in
 * the second half are walked from the other end (see pageWindow).
 */
export async function listContactRows(db: Db, tenantId: string, filters: ContactFilters, page: PageRequest) {
  const base = filteredContacts(db, tenantId, filters, page.updatedSince);
  const count = await base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
  const total = Number(count.total);
  const window = pageWindow(total, page.offset, page.perPage);
  if (!window.any) return { total, rows: [] };
  const descending = page.descending !== window.reversed;
  const direction = descending ? 'desc' : 'asc';
  const sortField = page.sortField as 'id' | 'name' | 'created_at' | 'updated_at';
  const pageIds = pageSource(db, base, filters)
    .select('contacts.id')
    .orderBy(`contacts.${sortField}`, direction)
    .orderBy('contacts.id', direction)
    .limit(window.limit)
    .offset(window.offset);
  const rows = await selectContactRows(db)
    .innerJoin(pageIds.as('page'), 'page.id', 'contacts.id')
    .orderBy(`contacts.${sortField}`, direction)
    .orderBy('contacts.id', direction)
    .execute();
  return { total, rows: window.reversed ? rows.reverse() : rows };
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

/** Replaces the contact's assigned users, keeping the given order. */
export async function replaceContactUsers(db: Db, contactId: number, userIds: number[]): Promise<void> {
  await db.deleteFrom('contact_users').where('contact_id', '=', contactId).execute();
  if (userIds.length === 0) return;
  await db
    .insertInto('contact_users')
    .values(userIds.map((userId, position) => ({ contact_id: contactId, user_id: userId, position })))
    .execute();
}

/** Deletes a contact of the tenant; false when it is not there. */
export async function deleteContactRow(db: Db, tenantId: string, id: number): Promise<boolean> {
  const result = await db.deleteFrom('contacts').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

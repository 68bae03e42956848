import type { Contact } from '@crm/contracts';
import { inIdOrder, inTransaction, type ListRequest, listPagination } from '@crm/db';
import { writeEvent, writeEvents } from '@crm/events';
import { assertIfMatch, notFound, throwIfInvalid } from '@crm/http';
import type { Kysely } from 'kysely';
import type { SalesDatabase } from '../db/database.ts';
import { resolveContactIdentifier } from './identifier.ts';
import type { ContactCreate, ContactUpdate } from './model.ts';
import {
  type ContactColumns,
  type ContactFilters,
  type ContactRow,
  deleteContactRow,
  deleteLocation,
  findContactByIdentifier,
  findContactRows,
  insertContacts,
  insertContactUsers,
  lockContactRows,
  mergeLocation,
  readContactPage,
  replaceContactUsers,
  updateContactColumns,
} from './repo.ts';
import { contactRuleErrors, userIdsOf } from './rules.ts';

type Db = Kysely<SalesDatabase>;

const SCALAR_FIELDS = ['name', 'type', 'email', 'is_person', 'cif', 'phone', 'web', 'iban', 'comments', 'extra_fields'] as const;

/** An instant as the API writes it; pg already gives a Date (no copy of it), anything else is parsed. */
function instant(value: Date | string): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

/** Maps a stored contact row to the API shape. */
export function presentContact(row: ContactRow): Contact {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    email: row.email,
    is_person: row.is_person,
    cif: row.cif,
    phone: row.phone,
    web: row.web,
    iban: row.iban,
    comments: row.comments,
    users: row.users,
    location: row.location,
    extra_fields: row.extra_fields,
    created_at: instant(row.created_at),
    updated_at: instant(row.updated_at),
  };
}

/** The scalar columns a request sets: only the fields it carries (null included). */
function scalarColumns(input: ContactUpdate): ContactColumns {
  return Object.fromEntries(SCALAR_FIELDS.filter((f) => input[f] !== undefined).map((f) => [f, input[f]]));
}

/** Contacts as the API returns them, in the order of `ids` (missing ones left out). */
export async function loadContacts(db: Db, tenantId: string, ids: number[]): Promise<Contact[]> {
  return inIdOrder((await findContactRows(db, tenantId, ids)).map(presentContact), ids);
}

async function requireContactId(db: Db, tenantId: string, identifier: string): Promise<number> {
  const id = await resolveContactIdentifier(db, tenantId, identifier);
  if (id === undefined) throw notFound('Contact');
  return id;
}

/** The contact designated by an identifier (contract §11), or 404. */
export async function getContact(db: Db, tenantId: string, identifier: string): Promise<Contact> {
  const row = await findContactByIdentifier(db, tenantId, identifier);
  if (!row) throw notFound('Contact');
  return presentContact(row);
}

/** One page of the tenant's contacts with its pagination object (page or cursor mode). */
export async function listContacts(db: Db, tenantId: string, filters: ContactFilters, request: ListRequest) {
  const page = await readContactPage(db, tenantId, filters, request);
  return { data: await loadContacts(db, tenantId, page.ids), pagination: listPagination(page, request) };
}

/**
 * Locks a contact for a write (so concurrent writers queue) and checks the client's `If-Match`
 * against it as the API presents it now (contract §24): 404 when it is gone, 412 when it changed.
 */
async function lockForWrite(trx: Db, tenantId: string, id: number, ifMatch: string | undefined): Promise<void> {
  if ((await lockContactRows(trx, tenantId, [id])).length === 0) throw notFound('Contact');
  if (ifMatch === undefined) return;
  const [current] = await loadContacts(trx, tenantId, [id]);
  assertIfMatch(ifMatch, current);
}

/** Inserts contacts with their locations and users; returns their ids in input order. */
export async function writeNewContacts(
  trx: Db,
  tenantId: string,
  inputs: ContactCreate[],
  userIds: Map<string, number>,
): Promise<number[]> {
  if (inputs.length === 0) return [];
  const ids = await insertContacts(
    trx,
    tenantId,
    inputs.map((input) => ({ ...scalarColumns(input), name: input.name, type: input.type })),
  );
  for (const [index, input] of inputs.entries()) {
    const id = ids[index] as number;
    if (input.location) await mergeLocation(trx, id, input.location);
    if (input.users) await insertContactUsers(trx, id, userIdsOf(input.users, userIds));
  }
  return ids;
}

/** Applies a partial update (PUT semantics, §4) to a locked contact; false when it is not there. */
export async function writeContactChanges(
  trx: Db,
  tenantId: string,
  id: number,
  input: ContactUpdate,
  userIds: Map<string, number>,
): Promise<boolean> {
  if (!(await updateContactColumns(trx, tenantId, id, scalarColumns(input)))) return false;
  if (input.location === null) await deleteLocation(trx, id);
  else if (input.location) await mergeLocation(trx, id, input.location);
  if (input.users !== undefined) await replaceContactUsers(trx, id, userIdsOf(input.users ?? [], userIds));
  return true;
}

/**
 * Creates contacts all or nothing: rules are checked for every item first (fields prefixed
 * with `prefixOf(i)`), then rows and one `contact.created` event per contact are written in
 * one transaction.
 */
export async function createContacts(
  db: Db,
  tenantId: string,
  inputs: ContactCreate[],
  prefixOf: (index: number) => string,
): Promise<Contact[]> {
  const { details, userIds } = await contactRuleErrors(
    db,
    tenantId,
    inputs.map((body, index) => ({ body, prefix: prefixOf(index) })),
  );
  throwIfInvalid(details);
  return inTransaction(db, async (trx) => {
    const contacts = await loadContacts(trx, tenantId, await writeNewContacts(trx, tenantId, inputs, userIds));
    await writeEvents(
      trx,
      contacts.map((data) => ({ tenantId, type: 'contact.created' as const, data })),
    );
    return contacts;
  });
}

/**
 * Partial update (PUT and PATCH): omitted fields are kept, null clears, `location` is merged.
 * With `ifMatch`, 412 unless it is the contact's current ETag (checked under the row lock).
 */
export async function updateContact(
  db: Db,
  tenantId: string,
  identifier: string,
  input: ContactUpdate,
  ifMatch?: string,
): Promise<Contact> {
  const id = await requireContactId(db, tenantId, identifier);
  const { details, userIds } = await contactRuleErrors(db, tenantId, [{ body: input, prefix: '' }]);
  throwIfInvalid(details);
  return inTransaction(db, async (trx) => {
    await lockForWrite(trx, tenantId, id, ifMatch);
    if (!(await writeContactChanges(trx, tenantId, id, input, userIds))) throw notFound('Contact');
    const [contact] = await loadContacts(trx, tenantId, [id]);
    if (!contact) throw notFound('Contact');
    await writeEvent(trx, { tenantId, type: 'contact.updated', data: contact });
    return contact;
  });
}

/** Deletes the contact and writes `contact.deleted` { id } in the same transaction; If-Match as for updates. */
export async function deleteContact(db: Db, tenantId: string, identifier: string, ifMatch?: string): Promise<void> {
  const id = await requireContactId(db, tenantId, identifier);
  await inTransaction(db, async (trx) => {
    await lockForWrite(trx, tenantId, id, ifMatch);
    if (!(await deleteContactRow(trx, tenantId, id))) throw notFound('Contact');
    await writeEvent(trx, { tenantId, type: 'contact.deleted', data: { id } });
  });
}

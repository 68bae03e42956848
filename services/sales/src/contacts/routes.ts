import { ResolvedContact } from '@crm/contracts';
import { listRequest, type SortType } from '@crm/db';
import {
  checkedQuery,
  Deleted,
  isPlainObject,
  jsonBody,
  listQuery,
  notFound,
  type RuleCheck,
  requestContext,
  throwIfInvalid,
} from '@crm/http';
import { exactlyOnce } from '@crm/idempotency';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import type { SalesDatabase } from '../db/database.ts';
import { resolveContactIdentifier } from './identifier.ts';
import {
  ContactBatch,
  ContactBatchResponse,
  ContactCreate,
  ContactListQuery,
  ContactListResponse,
  ContactParams,
  ContactResolveQuery,
  ContactResponse,
  ContactUpdate,
  ContactUpsert,
  ContactUpsertResponse,
} from './model.ts';
import { contactRuleErrors } from './rules.ts';
import { createContacts, deleteContact, getContact, listContacts, updateContact } from './service.ts';
import { upsertContacts } from './upsert.ts';
import { upsertRuleErrors } from './upsert-rules.ts';

/** Sortable fields and their column types (a cursor's sort value is cast back with it). */
const SORTS: Record<string, SortType> = { id: 'integer', name: 'text', created_at: 'timestamptz', updated_at: 'timestamptz' };
const SORT_NAMES = Object.keys(SORTS);
const TAGS = ['Contacts'];
const IDENTIFIER_HELP =
  '`{identifier}` is matched in this order: numeric id, exact name, e-mail (case-insensitive), CIF; the lowest id wins among several matches. URL-encode it (`Acme%20Ltd`).';
const ETAG_HELP = "The answer carries the contact's strong `ETag`; a GET with `If-None-Match` holding it answers 304 without a body.";
const IF_MATCH_HELP =
  "`If-Match` (optional): the write happens only if the contact's current `ETag` is listed (`*` matches any existing contact); otherwise 412 `precondition_failed` and nothing changes. It is compared under a row lock, so of two writers sending the same ETag exactly one succeeds. A 412 is not stored under an `Idempotency-Key`: retry with a fresh ETag and the same key.";
const LIST_HELP = [
  'Filters: `q` (case-insensitive substring of name, email or cif), `type`, `email` (case-insensitive), `cif`, `updated_since`; `sort` on id, name, created_at, updated_at (`-field` descending, ties by id).',
  'Page mode (`page`, default): `pagination` counts the matches (`total`, `current_page`, `last_page`). Cursor mode: send `pagination.next_cursor` as `cursor` to continue after the last contact with the same sort and filters, without counting (`total`, `current_page`, `last_page` are null). A walk by id, name (while none is renamed) or created_at returns every contact that existed for the whole walk exactly once, whatever is inserted or deleted meanwhile; by updated_at a contact updated during the walk comes again. A cursor with another sort or filters, a malformed one, or `cursor` with `page` → 422 on `cursor`.',
  'The `Link` header (RFC 8288) has first/prev/next/last page URLs in page mode and the next cursor URL in cursor mode.',
].join('\n\n');
const UPSERT_HELP = [
  'Keeps contacts in step with another system. Each item is matched on its `id_property` value within the account (`email` case-insensitively, `cif` and `name` exactly; the lowest-id contact wins): a match is updated like PUT (omitted fields kept, `null` clears, `location` merged, `users` replaced), no match is created (then `name` and `type` are required).',
  'All or nothing, in one transaction: 200 with the contacts and a `created` flag per item, in request order, and one `contact.created` or `contact.updated` event per item. An item without the `id_property` value → 422 on `data[i].<property>`; two items with the same value → 422 on the later one; every other failure is in the same 422 with `data[i].` fields.',
  'Two upserts that name the same new value at the same time do not create two contacts: the second waits for the first and updates what it created.',
].join('\n\n');

/** Contacts: the public CRUD, list and batch routes, and the internal identifier resolution. */
export function contactsRoutes(db: Kysely<SalesDatabase>) {
  const singleRules: RuleCheck = async (body, { tenantId }) => (await contactRuleErrors(db, tenantId, [{ body, prefix: '' }])).details;
  const batchRules: RuleCheck = async (body, { tenantId }) => {
    const items = isPlainObject(body) && Array.isArray(body.data) ? body.data : [];
    return (
      await contactRuleErrors(
        db,
        tenantId,
        items.map((item, i) => ({ body: item, prefix: `data[${i}].` })),
      )
    ).details;
  };
  const upsertRules: RuleCheck = async (body, { tenantId }) => (await upsertRuleErrors(db, tenantId, body)).details;
  const update = {
    params: ContactParams,
    ...jsonBody(ContactUpdate, singleRules),
    response: { 200: ContactResponse },
    detail: {
      summary: 'Update a contact',
      tags: TAGS,
      description: `Partial update: omitted fields are kept, \`null\` clears a nullable field, \`location\` fields are merged into the existing location, \`users\` replaces the assigned users. PUT and PATCH behave the same. ${IDENTIFIER_HELP}\n\n${IF_MATCH_HELP} ${ETAG_HELP}`,
    },
  };

  return new Elysia({ name: 'sales-contacts' })
    .use(requestContext)
    .use(exactlyOnce(db))
    .post(
      '/v1/contacts',
      async ({ body, tenantId, set, write }) => {
        const [contact] = await createContacts(write.db, tenantId, [body], () => '');
        set.status = 201;
        return { data: contact as NonNullable<typeof contact> };
      },
      {
        ...jsonBody(ContactCreate, singleRules),
        response: { 201: ContactResponse },
        detail: {
          summary: 'Create a contact',
          tags: TAGS,
          description: `\`name\` and \`type\` are required; \`users\` are e-mails of account users. ${ETAG_HELP}`,
        },
      },
    )
    .get(
      '/v1/contacts',
      async ({ query, tenantId }) => {
        const filters = { q: query.q, type: query.type, email: query.email, cif: query.cif };
        // A cursor is bound to the sort, these filters and updated_since (another → 422 on `cursor`).
        const { request, errors } = listRequest(query, SORTS, filters);
        throwIfInvalid(errors);
        return listContacts(db, tenantId, filters, request);
      },
      {
        ...listQuery(ContactListQuery, SORT_NAMES),
        response: { 200: ContactListResponse },
        detail: { summary: 'List contacts', tags: TAGS, description: LIST_HELP },
      },
    )
    .post(
      '/v1/contacts/batch',
      async ({ body, tenantId, set, write }) => {
        const data = await createContacts(write.db, tenantId, body.data, (i) => `data[${i}].`);
        set.status = 201;
        return { data };
      },
      {
        ...jsonBody(ContactBatch, batchRules),
        response: { 201: ContactBatchResponse },
        detail: {
          summary: 'Create up to 100 contacts',
          tags: TAGS,
          description: 'All or nothing: one invalid item fails the batch, with fields like `data[3].name`.',
        },
      },
    )
    .post('/v1/contacts/batch/upsert', async ({ body, tenantId, write }) => upsertContacts(write.db, tenantId, body), {
      ...jsonBody(ContactUpsert, upsertRules),
      response: { 200: ContactUpsertResponse },
      detail: { summary: 'Create or update up to 100 contacts, matched on e-mail, cif or name', tags: TAGS, description: UPSERT_HELP },
    })
    .get('/v1/contacts/:identifier', async ({ params, tenantId }) => ({ data: await getContact(db, tenantId, params.identifier) }), {
      params: ContactParams,
      response: { 200: ContactResponse },
      detail: { summary: 'Get a contact', tags: TAGS, description: `${IDENTIFIER_HELP} ${ETAG_HELP}` },
    })
    .put(
      '/v1/contacts/:identifier',
      async ({ params, body, tenantId, ifMatch, write }) => ({
        data: await updateContact(write.db, tenantId, params.identifier, body, ifMatch),
      }),
      update,
    )
    .patch(
      '/v1/contacts/:identifier',
      async ({ params, body, tenantId, ifMatch, write }) => ({
        data: await updateContact(write.db, tenantId, params.identifier, body, ifMatch),
      }),
      update,
    )
    .delete(
      '/v1/contacts/:identifier',
      async ({ params, tenantId, ifMatch, write }) => {
        await deleteContact(write.db, tenantId, params.identifier, ifMatch);
        return { deleted: true };
      },
      {
        params: ContactParams,
        response: { 200: Deleted },
        detail: {
          summary: 'Delete a contact',
          tags: TAGS,
          description: `Its documents, orders and opportunities stay. ${IDENTIFIER_HELP}\n\n${IF_MATCH_HELP}`,
        },
      },
    )
    .get(
      '/internal/contacts/resolve',
      async ({ query, tenantId }) => {
        const id = await resolveContactIdentifier(db, tenantId, query.identifier);
        if (id === undefined) throw notFound('Contact');
        return { data: { id } };
      },
      { ...checkedQuery(ContactResolveQuery), response: { 200: ResolvedContact } },
    );
}

import { ResolvedContact } from '@crm/contracts';
import { pageRequest } from '@crm/db';
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
  ContactResponse,
  ContactUpdate,
  IdentifierParams,
  ResolveQuery,
} from './model.ts';
import { contactRuleErrors } from './rules.ts';
import { createContacts, deleteContact, getContact, listContacts, updateContact } from './service.ts';

const SORTABLE = ['id', 'name', 'created_at', 'updated_at'] as const;
const TAGS = ['Contacts'];
const IDENTIFIER_HELP =
  '`{identifier}` is matched in this order: numeric id, exact name, e-mail (case-insensitive), CIF; the lowest id wins among several matches. URL-encode it (`Acme%20Ltd`).';

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
  const update = {
    params: IdentifierParams,
    ...jsonBody(ContactUpdate, singleRules),
    response: { 200: ContactResponse },
    detail: {
      summary: 'Update a contact',
      tags: TAGS,
      description: `Partial update: omitted fields are kept, \`null\` clears a nullable field, \`location\` fields are merged into the existing location, \`users\` replaces the assigned users. PUT and PATCH behave the same. ${IDENTIFIER_HELP}`,
    },
  };

  return new Elysia({ name: 'sales-contacts' })
    .use(requestContext)
    .post(
      '/v1/contacts',
      async ({ body, tenantId, set }) => {
        const [contact] = await createContacts(db, tenantId, [body], () => '');
        set.status = 201;
        return { data: contact as NonNullable<typeof contact> };
      },
      {
        ...jsonBody(ContactCreate, singleRules),
        response: { 201: ContactResponse },
        detail: {
          summary: 'Create a contact',
          tags: TAGS,
          description: '`name` and `type` are required; `users` are e-mails of account users.',
        },
      },
    )
    .get(
      '/v1/contacts',
      async ({ query, tenantId }) => {
        const { request, errors } = pageRequest(query, SORTABLE);
        throwIfInvalid(errors);
        const { q, type, email, cif } = query;
        return listContacts(db, tenantId, { q, type, email, cif }, request);
      },
      {
        ...listQuery(ContactListQuery, SORTABLE),
        response: { 200: ContactListResponse },
        detail: {
          summary: 'List contacts',
          tags: TAGS,
          description:
            'Filters: `q` (substring of name, email or cif), `type`, `email`, `cif`, `updated_since`; `sort` on id, name, created_at, updated_at (`-` for descending).',
        },
      },
    )
    .post(
      '/v1/contacts/batch',
      async ({ body, tenantId, set }) => {
        const data = await createContacts(db, tenantId, body.data, (i) => `data[${i}].`);
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
    .get('/v1/contacts/:identifier', async ({ params, tenantId }) => ({ data: await getContact(db, tenantId, params.identifier) }), {
      params: IdentifierParams,
      response: { 200: ContactResponse },
      detail: { summary: 'Get a contact', tags: TAGS, description: IDENTIFIER_HELP },
    })
    .put(
      '/v1/contacts/:identifier',
      async ({ params, body, tenantId }) => ({ data: await updateContact(db, tenantId, params.identifier, body) }),
      update,
    )
    .patch(
      '/v1/contacts/:identifier',
      async ({ params, body, tenantId }) => ({ data: await updateContact(db, tenantId, params.identifier, body) }),
      update,
    )
    .delete(
      '/v1/contacts/:identifier',
      async ({ params, tenantId }) => {
        await deleteContact(db, tenantId, params.identifier);
        return { deleted: true };
      },
      {
        params: IdentifierParams,
        response: { 200: Deleted },
        detail: {
          summary: 'Delete a contact',
          tags: TAGS,
          description: `Its documents, orders and opportunities stay. ${IDENTIFIER_HELP}`,
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
      { ...checkedQuery(ResolveQuery), response: { 200: ResolvedContact } },
    );
}

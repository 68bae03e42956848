import { requestContext } from '@crm/http';
import { Type } from '@sinclair/typebox';
import { Elysia, t } from 'elysia';
import type { Kysely } from 'kysely';
import type { SalesDatabase } from '../db/database.ts';
import { tenantContactTypes } from './repo.ts';

const ContactType = t.Object(
  { id: Type.Integer(), reference: t.String(), name: t.String() },
  { title: 'ContactType', examples: [{ id: 1, reference: 'client', name: 'Client' }] },
);
const ContactTypeListResponse = t.Object({ data: t.Array(ContactType) }, { title: 'ContactTypeListResponse' });

/**
 * GET /v1/contacts/types. Registered before the contacts routes; Elysia's router prefers the
 * static segment over `/v1/contacts/:identifier`, so a contact named "types" is reached by id.
 */
export function contactTypesRoutes(db: Kysely<SalesDatabase>) {
  return new Elysia({ name: 'sales-contact-types' })
    .use(requestContext)
    .get('/v1/contacts/types', async ({ tenantId }) => ({ data: await tenantContactTypes(db, tenantId) }), {
      response: { 200: ContactTypeListResponse },
      detail: {
        summary: 'List contact types',
        tags: ['Contacts'],
        description:
          "The references accepted in a contact's `type`. Every account starts with client, lead, prospect, supplier and partner.",
      },
    });
}

import { Contact } from '@crm/contracts';
import { ExtraFields, ListPagination, listQueryWith, Name, NonNegativeInt } from '@crm/http';
import { type Static, t } from 'elysia';

const text = (description?: string) => t.String({ maxLength: 255, description });
const longText = () => t.String({ maxLength: 65_535 });
const email = (description?: string) => t.String({ format: 'email', maxLength: 255, description });
const nullable = <S extends Parameters<typeof t.Nullable>[0]>(schema: S) => t.Optional(t.Nullable(schema));

const locationFields = {
  primary: nullable(NonNegativeInt()),
  direction: nullable(text()),
  city: nullable(text()),
  postal: nullable(text()),
  country: nullable(text()),
  latitude: nullable(text()),
  longitude: nullable(text()),
  extra_info: nullable(longText()),
};

/** Location fields in a request; on update only the given fields change. */
export const LocationInput = t.Object(locationFields, {
  additionalProperties: false,
  title: 'LocationInput',
  examples: [{ direction: 'Calle Mayor 1', city: 'Madrid', postal: '28013', country: 'ES' }],
});
export type LocationInput = Static<typeof LocationInput>;

const optionalContactFields = {
  email: nullable(email()),
  is_person: nullable(t.Boolean()),
  cif: nullable(text('Tax identifier')),
  phone: nullable(text()),
  web: nullable(text()),
  iban: nullable(text()),
  comments: nullable(longText()),
  users: nullable(t.Array(email(), { maxItems: 100, description: "E-mails of the account's users" })),
  location: nullable(LocationInput),
  extra_fields: nullable(ExtraFields()),
};

/** POST /contacts body: `name` and `type` required. */
export const ContactCreate = t.Object(
  {
    name: Name(),
    type: Name({ description: 'A reference from GET /contacts/types' }),
    ...optionalContactFields,
  },
  {
    additionalProperties: false,
    title: 'ContactCreate',
    examples: [
      {
        name: 'Acme Ltd',
        type: 'client',
        email: 'hello@acme.test',
        is_person: false,
        cif: 'B12345678',
        phone: '+34 910 000 000',
        web: 'https://acme.test',
        comments: 'Key account since 2024',
        users: ['demo@example.com'],
        location: { direction: 'Calle Mayor 1', city: 'Madrid', postal: '28013', country: 'ES', latitude: '40.4168', longitude: '-3.7038' },
        extra_fields: { segment: 'enterprise' },
      },
    ],
  },
);
export type ContactCreate = Static<typeof ContactCreate>;

/** PUT/PATCH /contacts/{identifier} body: every field optional; null clears a nullable field. */
export const ContactUpdate = t.Object(
  {
    name: t.Optional(Name()),
    type: t.Optional(Name({ description: 'A reference from GET /contacts/types' })),
    ...optionalContactFields,
  },
  {
    additionalProperties: false,
    title: 'ContactUpdate',
    examples: [{ phone: '+34 910 000 001', comments: 'Renewal due in March', location: { direction: 'Calle Mayor 3' } }],
  },
);
export type ContactUpdate = Static<typeof ContactUpdate>;

/** POST /contacts/batch body. */
export const ContactBatch = t.Object(
  { data: t.Array(ContactCreate, { minItems: 1, maxItems: 100 }) },
  {
    additionalProperties: false,
    title: 'ContactBatch',
    examples: [
      {
        data: [
          { name: 'Globex Corporation', type: 'lead', email: 'sales@globex.test', cif: 'B87654321' },
          { name: 'Jane Doe', type: 'prospect', email: 'jane.doe@example.com', is_person: true, users: ['demo@example.com'] },
        ],
      },
    ],
  },
);

/** POST /contacts/batch/upsert body (contract §23): items are update bodies; an unmatched one must be a full create body. */
export const ContactUpsert = t.Object(
  {
    id_property: t.Union([t.Literal('email'), t.Literal('cif'), t.Literal('name')], {
      description: 'What each item is matched on: `email` (case-insensitive), `cif` or `name` (exact); the lowest-id match wins',
    }),
    data: t.Array(ContactUpdate, { minItems: 1, maxItems: 100 }),
  },
  {
    additionalProperties: false,
    title: 'ContactUpsert',
    examples: [
      {
        id_property: 'email',
        data: [
          { email: 'hello@acme.test', phone: '+34 910 000 002' },
          { email: 'info@initech.test', name: 'Initech', type: 'prospect' },
        ],
      },
    ],
  },
);
export type ContactUpsert = Static<typeof ContactUpsert>;

/** GET /contacts query. */
export const ContactListQuery = listQueryWith({
  q: t.Optional(text('Case-insensitive substring of name, email or cif')),
  type: t.Optional(text('Contact type reference')),
  email: t.Optional(text('Exact e-mail (case-insensitive)')),
  cif: t.Optional(text('Exact tax identifier')),
});

/** `{identifier}` of the contact routes (contract §11). */
export const ContactParams = t.Object({ identifier: t.String({ description: 'Contact id, name, e-mail or CIF' }) });

/** GET /internal/contacts/resolve query. */
export const ContactResolveQuery = t.Object({ identifier: t.String() }, { additionalProperties: true });

export const ContactResponse = t.Object({ data: Contact }, { title: 'ContactResponse' });
export const ContactListResponse = t.Object({ data: t.Array(Contact), pagination: ListPagination }, { title: 'ContactListResponse' });
export const ContactBatchResponse = t.Object({ data: t.Array(Contact) }, { title: 'ContactBatchResponse' });
export const ContactUpsertResponse = t.Object(
  {
    data: t.Array(Contact),
    created: t.Array(t.Boolean(), { description: 'Per item, in request order: true when it created a contact, false when it updated one' }),
  },
  { title: 'ContactUpsertResponse' },
);

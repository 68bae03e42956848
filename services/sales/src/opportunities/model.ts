import { Opportunity, OpportunityStatus } from '@crm/contracts';
import { DateOnly, ExtraFields, IdParams, ListPagination, listQueryWith, Money, Name, QueryId } from '@crm/http';
import { Type } from '@sinclair/typebox';
import { type Static, t } from 'elysia';

const nullable = <S extends Parameters<typeof t.Nullable>[0]>(schema: S) => t.Optional(t.Nullable(schema));

const optionalFields = {
  user_email: nullable(t.String({ format: 'email', maxLength: 255, description: "An account user's e-mail; becomes user_id" })),
  amount: t.Optional(Money({ description: 'Rounded to 2 decimals; default 0' })),
  currency: t.Optional(
    t.String({
      pattern: '^[A-Z]{3}$',
      patternMessage: 'must be an ISO 4217 code of three capital letters',
      description: 'ISO 4217, default EUR',
    }),
  ),
  status: t.Optional(OpportunityStatus),
  // A whole percentage: the column is an integer, so 12.5 is refused rather than rounded.
  probability: nullable(Type.Integer({ minimum: 0, maximum: 100, description: 'Whole percentage 0..100' })),
  close_date: nullable(DateOnly()),
  comments: nullable(t.String({ maxLength: 65_535 })),
  extra_fields: nullable(ExtraFields()),
};

/** POST /opportunities body. */
export const OpportunityCreate = t.Object(
  {
    name: Name(),
    enterprise_identifier: Name({ description: 'Contact id, name, e-mail or CIF' }),
    ...optionalFields,
  },
  {
    additionalProperties: false,
    title: 'OpportunityCreate',
    examples: [
      {
        name: 'Acme renewal 2027',
        enterprise_identifier: 'Acme Ltd',
        user_email: 'demo@example.com',
        amount: 12000,
        currency: 'EUR',
        status: 'open',
        probability: 40,
        close_date: '2027-03-31',
        comments: 'Three-year renewal with volume discount',
      },
    ],
  },
);
export type OpportunityCreate = Static<typeof OpportunityCreate>;

/** PUT/PATCH /opportunities/{id} body: every field optional; null clears a nullable field. */
export const OpportunityUpdate = t.Object(
  {
    name: t.Optional(Name()),
    enterprise_identifier: t.Optional(Name({ description: 'Contact id, name, e-mail or CIF' })),
    ...optionalFields,
  },
  { additionalProperties: false, title: 'OpportunityUpdate', examples: [{ status: 'won', probability: 100, amount: 12500 }] },
);
export type OpportunityUpdate = Static<typeof OpportunityUpdate>;

/** POST /opportunities/batch body. */
export const OpportunityBatch = t.Object(
  { data: t.Array(OpportunityCreate, { minItems: 1, maxItems: 100 }) },
  {
    additionalProperties: false,
    title: 'OpportunityBatch',
    examples: [
      {
        data: [
          { name: 'Acme support plan', enterprise_identifier: 'B12345678', amount: 2400, close_date: '2027-06-30' },
          { name: 'Acme cabling', enterprise_identifier: 'hello@acme.test', amount: 800, status: 'lost' },
        ],
      },
    ],
  },
);

/** GET /opportunities query. */
export const OpportunityListQuery = listQueryWith({
  enterprise_id: QueryId('Only opportunities of this contact'),
  status: t.Optional(OpportunityStatus),
  q: t.Optional(t.String({ maxLength: 255, description: 'Case-insensitive substring of the name' })),
});

/** `{id}` of the opportunity routes. */
export const OpportunityParams = IdParams;

export const OpportunityResponse = t.Object({ data: Opportunity }, { title: 'OpportunityResponse' });
export const OpportunityListResponse = t.Object(
  { data: t.Array(Opportunity), pagination: ListPagination },
  { title: 'OpportunityListResponse' },
);
export const OpportunityBatchResponse = t.Object({ data: t.Array(Opportunity) }, { title: 'OpportunityBatchResponse' });

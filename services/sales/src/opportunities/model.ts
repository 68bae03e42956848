import { DateOnly, ExtraFields, ListPagination, listQueryWith, Money, Name, QueryId } from '@crm/http';
import { Type } from '@sinclair/typebox';
import { type Static, t } from 'elysia';

export const OPPORTUNITY_STATUSES = ['open', 'won', 'lost'] as const;
const Status = t.Union([t.Literal('open'), t.Literal('won'), t.Literal('lost')], { description: 'open | won | lost' });
const nullable = <S extends Parameters<typeof t.Nullable>[0]>(schema: S) => t.Optional(t.Nullable(schema));

/** An opportunity as the API returns it (contract §12). */
export const Opportunity = t.Object({
  id: Type.Integer(),
  name: t.String(),
  enterprise_id: Type.Integer({ description: 'The contact (enterprise) id' }),
  user_id: t.Nullable(Type.Integer({ description: 'The owning account user' })),
  amount: t.Number(),
  currency: t.String({ description: 'ISO 4217 code' }),
  status: Status,
  probability: t.Nullable(Type.Integer()),
  close_date: t.Nullable(t.String({ format: 'date' })),
  comments: t.Nullable(t.String()),
  extra_fields: t.Nullable(t.Record(t.String(), t.Unknown())),
  created_at: t.String({ format: 'date-time' }),
  updated_at: t.String({ format: 'date-time' }),
});
export type Opportunity = Static<typeof Opportunity>;

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
  status: t.Optional(Status),
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
  { additionalProperties: false },
);
export type OpportunityCreate = Static<typeof OpportunityCreate>;

/** PUT/PATCH /opportunities/{id} body: every field optional; null clears a nullable field. */
export const OpportunityUpdate = t.Object(
  {
    name: t.Optional(Name()),
    enterprise_identifier: t.Optional(Name({ description: 'Contact id, name, e-mail or CIF' })),
    ...optionalFields,
  },
  { additionalProperties: false },
);
export type OpportunityUpdate = Static<typeof OpportunityUpdate>;

/** POST /opportunities/batch body. */
export const OpportunityBatch = t.Object(
  { data: t.Array(OpportunityCreate, { minItems: 1, maxItems: 100 }) },
  { additionalProperties: false },
);

/** GET /opportunities query. */
export const OpportunityListQuery = listQueryWith({
  enterprise_id: QueryId('Only opportunities of this contact'),
  status: t.Optional(Status),
  q: t.Optional(t.String({ maxLength: 255, description: 'Case-insensitive substring of the name' })),
});

export const OpportunityResponse = t.Object({ data: Opportunity });
export const OpportunityListResponse = t.Object({ data: t.Array(Opportunity), pagination: ListPagination });
export const OpportunityBatchResponse = t.Object({ data: t.Array(Opportunity) });

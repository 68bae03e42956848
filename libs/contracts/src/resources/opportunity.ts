import { type Static, Type } from '@sinclair/typebox';
import { EXAMPLE_INSTANT, Instant, Nullable, StoredExtraFields } from './common.ts';

/** The statuses of an opportunity. */
export const OpportunityStatus = Type.Union([Type.Literal('open'), Type.Literal('won'), Type.Literal('lost')], {
  title: 'OpportunityStatus',
  description: 'open | won | lost',
});

/** An opportunity as the API returns it (contract §12). */
export const Opportunity = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    enterprise_id: Type.Integer({ description: 'The contact (enterprise) id' }),
    user_id: Nullable(Type.Integer({ description: 'The owning account user' })),
    amount: Type.Number(),
    currency: Type.String({ description: 'ISO 4217 code' }),
    status: OpportunityStatus,
    probability: Nullable(Type.Integer()),
    close_date: Nullable(Type.String({ format: 'date' })),
    comments: Nullable(Type.String()),
    extra_fields: Nullable(StoredExtraFields()),
    created_at: Instant(),
    updated_at: Instant(),
  },
  {
    title: 'Opportunity',
    examples: [
      {
        id: 1,
        name: 'Acme renewal 2027',
        enterprise_id: 1,
        user_id: 1,
        amount: 12000,
        currency: 'EUR',
        status: 'open',
        probability: 40,
        close_date: '2027-03-31',
        comments: 'Three-year renewal with volume discount',
        extra_fields: null,
        created_at: EXAMPLE_INSTANT,
        updated_at: EXAMPLE_INSTANT,
      },
    ],
  },
);
export type Opportunity = Static<typeof Opportunity>;

import { type Static, Type } from '@sinclair/typebox';
import { Instant, Nullable, StoredExtraFields } from './common.ts';

/** The statuses of an opportunity. */
export const OpportunityStatus = Type.Union([Type.Literal('open'), Type.Literal('won'), Type.Literal('lost')], {
  description: 'open | won | lost',
});

/** An opportunity as the API returns it (contract §12). */
export const Opportunity = Type.Object({
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
});
export type Opportunity = Static<typeof Opportunity>;

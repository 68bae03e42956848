import { type Static, Type } from '@sinclair/typebox';
import { Instant, Nullable, StoredExtraFields } from './common.ts';

// Response schemas describe what is stored; each service's database holds the same bounds, so a
// stored resource always passes them.

/** A product line as the API returns it: a snapshot of the product taken when the line was written. */
export const OrderLine = Type.Object({
  id: Type.Integer({ description: 'Product id' }),
  reference: Type.String(),
  name: Type.String({ description: 'Product name when the line was written' }),
  pivot: Type.Object({
    cost: Type.Number(),
    price: Type.Number(),
    discount: Type.Number(),
    quantity: Type.Number(),
    comment: Nullable(Type.String()),
    description: Nullable(Type.String()),
    rate_sku: Nullable(Type.String(), { description: 'The rate the line was priced from' }),
  }),
});

/** One entry of an order's state history. */
export const OrderState = Type.Object({
  id: Type.Integer(),
  state: Type.Integer(),
  amount: Type.Number({ description: 'Order total when the state was entered' }),
  created_at: Instant(),
});

/** The Order resource (contract §13). */
export const Order = Type.Object({
  id: Type.Integer(),
  reference: Type.String(),
  enterprise_id: Type.Integer(),
  user_id: Type.Integer(),
  opportunity_id: Nullable(Type.Integer()),
  date_limit: Type.String({ format: 'date' }),
  state: Type.Integer(),
  comments: Nullable(Type.String()),
  extra_fields: Nullable(StoredExtraFields()),
  total: Type.Number({ description: 'Σ price × quantity × (1 − discount/100), rounded to 2 decimals; at most 999999999999.99' }),
  states: Type.Array(OrderState),
  products: Type.Array(OrderLine),
  created_at: Instant(),
  updated_at: Instant(),
});
export type Order = Static<typeof Order>;

/** `order.state_changed`: the order plus the state it left. */
export const OrderStateChanged = Type.Composite([Order, Type.Object({ previous_state: Type.Integer() })]);

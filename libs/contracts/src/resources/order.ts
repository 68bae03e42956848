import { type Static, Type } from '@sinclair/typebox';
import { EXAMPLE_INSTANT, Instant, Nullable, StoredExtraFields } from './common.ts';

// Response schemas describe what is stored; each service's database holds the same bounds, so a
// stored resource always passes them.

const orderLineExample = {
  id: 1,
  reference: 'WIDGET-1',
  name: 'Widget',
  pivot: { cost: 20, price: 49.9, discount: 5, quantity: 10, comment: 'Blue ones', description: null, rate_sku: 'WIDGET-1-STD' },
};
const orderStateExample = { id: 1, state: 1, amount: 474.05, created_at: EXAMPLE_INSTANT };
const orderExample = {
  id: 1,
  reference: 'ORD-2027-0001',
  enterprise_id: 1,
  user_id: 1,
  opportunity_id: null,
  date_limit: '2027-01-31',
  state: 1,
  comments: 'Deliver to the Madrid office',
  extra_fields: null,
  total: 474.05,
  states: [orderStateExample],
  products: [orderLineExample],
  created_at: EXAMPLE_INSTANT,
  updated_at: EXAMPLE_INSTANT,
};

/** A product line as the API returns it: a snapshot of the product taken when the line was written. */
export const OrderLine = Type.Object(
  {
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
  },
  { title: 'OrderLine', examples: [orderLineExample] },
);

/** One entry of an order's state history. */
export const OrderState = Type.Object(
  {
    id: Type.Integer(),
    state: Type.Integer(),
    amount: Type.Number({ description: 'Order total when the state was entered' }),
    created_at: Instant(),
  },
  { title: 'OrderState', examples: [orderStateExample] },
);

/** The Order resource (contract §13). */
export const Order = Type.Object(
  {
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
  },
  { title: 'Order', examples: [orderExample] },
);
export type Order = Static<typeof Order>;

/** `order.state_changed`: the order plus the state it left. */
export const OrderStateChanged = Type.Composite([Order, Type.Object({ previous_state: Type.Integer() })], {
  title: 'OrderStateChanged',
  examples: [{ ...orderExample, state: 2, states: [orderStateExample, { ...orderStateExample, id: 2, state: 2 }], previous_state: 1 }],
});

import { DateOnly, ExtraFields, Id, ListPagination, Money, Name, NonNegativeInt, Percentage, Quantity } from '@crm/http';
import { type Static, Type } from '@sinclair/typebox';

// Request schemas are plain TypeBox (JSON integers and numbers, never coerced strings) with the
// shared bounds of contract §19; every object refuses unknown fields at its own depth.
const closed = { additionalProperties: false } as const;
const LongText = () => Type.Union([Type.String({ maxLength: 65535 }), Type.Null()]);

/** One product line of an order request. */
export const OrderLineRequest = Type.Object(
  {
    reference: Name({ description: "A catalog product's reference" }),
    rate_sku: Type.Optional(Name({ description: "One of the product's rates; default its primary rate" })),
    cost: Type.Optional(Money({ description: "Unit cost, 0..999999999999.99; default the rate's cost" })),
    price: Type.Optional(Money({ description: "Unit price, 0..999999999999.99; default the rate's price" })),
    discount: Type.Optional(Percentage({ description: 'Percentage 0..100; default 0' })),
    quantity: Type.Optional(Quantity({ description: 'Greater than 0, at most 1000000000; default 1' })),
    comment: Type.Optional(LongText()),
    description: Type.Optional(LongText()),
  },
  closed,
);
export type OrderLineRequest = Static<typeof OrderLineRequest>;

const Lines = Type.Array(OrderLineRequest, {
  maxItems: 500,
  description: 'Product lines; on update the list replaces all lines. Each line total and the order total must be at most 999999999999.99',
});

/** POST /orders (and each item of POST /orders/batch). */
export const CreateOrderRequest = Type.Object(
  {
    reference: Type.Optional(Name({ description: 'Unique per account; generated (`ORD-000001`, …) when omitted' })),
    enterprise_identifier: Name({ description: 'Contact id, name, e-mail or CIF' }),
    user_email: Type.String({ format: 'email', maxLength: 255, description: "An account user's e-mail" }),
    opportunity_id: Type.Optional(Type.Union([Id(), Type.Null()])),
    date_limit: DateOnly({ description: 'YYYY-MM-DD, 0001-01-01..9999-12-31' }),
    state: NonNegativeInt({ description: '0..2147483647' }),
    comments: Type.Optional(LongText()),
    extra_fields: Type.Optional(Type.Union([ExtraFields(), Type.Null()])),
    products: Type.Optional(Lines),
  },
  closed,
);
export type CreateOrderRequest = Static<typeof CreateOrderRequest>;

/** PUT/PATCH /orders/{reference}: partial; omitted fields are kept, null clears a nullable one. */
export const UpdateOrderRequest = Type.Object(
  {
    opportunity_id: Type.Optional(Type.Union([Id(), Type.Null()])),
    date_limit: Type.Optional(DateOnly({ description: 'YYYY-MM-DD, 0001-01-01..9999-12-31' })),
    state: Type.Optional(NonNegativeInt({ description: '0..2147483647' })),
    comments: Type.Optional(LongText()),
    extra_fields: Type.Optional(Type.Union([ExtraFields(), Type.Null()])),
    products: Type.Optional(Lines),
  },
  closed,
);
export type UpdateOrderRequest = Static<typeof UpdateOrderRequest>;

/** POST /orders/batch. */
export const CreateOrdersBatchRequest = Type.Object({ data: Type.Array(CreateOrderRequest, { minItems: 1, maxItems: 100 }) }, closed);

// Response schemas describe what is stored; the database holds the same bounds (migration
// 0021_orders_input_bounds), so a stored order always passes them.
const StoredExtraFields = Type.Record(Type.String(), Type.Unknown(), { description: 'Free-form key/value object' });
const Integer = Type.Integer;

/** A product line as the API returns it: a snapshot of the product taken when the line was written. */
export const OrderLine = Type.Object({
  id: Integer({ description: 'Product id' }),
  reference: Type.String(),
  name: Type.String({ description: 'Product name when the line was written' }),
  pivot: Type.Object({
    cost: Type.Number(),
    price: Type.Number(),
    discount: Type.Number(),
    quantity: Type.Number(),
    comment: Type.Union([Type.String(), Type.Null()]),
    description: Type.Union([Type.String(), Type.Null()]),
    rate_sku: Type.Union([Type.String(), Type.Null()], { description: 'The rate the line was priced from' }),
  }),
});

/** One entry of an order's state history. */
export const OrderState = Type.Object({
  id: Integer(),
  state: Integer(),
  amount: Type.Number({ description: 'Order total when the state was entered' }),
  created_at: Type.String({ format: 'date-time' }),
});

/** The Order resource. */
export const Order = Type.Object({
  id: Integer(),
  reference: Type.String(),
  enterprise_id: Integer(),
  user_id: Integer(),
  opportunity_id: Type.Union([Integer(), Type.Null()]),
  date_limit: Type.String({ format: 'date' }),
  state: Integer(),
  comments: Type.Union([Type.String(), Type.Null()]),
  extra_fields: Type.Union([StoredExtraFields, Type.Null()]),
  total: Type.Number({ description: 'Σ price × quantity × (1 − discount/100), rounded to 2 decimals; at most 999999999999.99' }),
  states: Type.Array(OrderState),
  products: Type.Array(OrderLine),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});
export type Order = Static<typeof Order>;

export const OrderEnvelope = Type.Object({ data: Order });
export const OrderList = Type.Object({ data: Type.Array(Order), pagination: ListPagination });
export const OrderBatchResponse = Type.Object({ data: Type.Array(Order) });

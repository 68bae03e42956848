import { Pagination } from '@crm/db';
import { Type } from '@sinclair/typebox';
import { type Static, t } from 'elysia';

// Body integers are plain JSON integers (Elysia's t.Integer would also accept numeric strings).
const Integer = Type.Integer;

const ExtraFields = t.Object({}, { additionalProperties: true, description: 'Free-form key/value object (JSON ≤ 16 KB)' });

/** One product line of an order request. */
export const OrderLineRequest = t.Object({
  reference: t.String({ minLength: 1, maxLength: 255, description: "A catalog product's reference" }),
  rate_sku: t.Optional(t.String({ minLength: 1, maxLength: 255, description: "One of the product's rates; default its primary rate" })),
  cost: t.Optional(t.Number({ minimum: 0, description: "Unit cost; default the rate's cost" })),
  price: t.Optional(t.Number({ minimum: 0, description: "Unit price; default the rate's price" })),
  discount: t.Optional(t.Number({ minimum: 0, maximum: 100, description: 'Percentage 0..100; default 0' })),
  quantity: t.Optional(t.Number({ exclusiveMinimum: 0, description: 'Greater than 0; default 1' })),
  comment: t.Optional(t.Union([t.String({ maxLength: 65535 }), t.Null()])),
  description: t.Optional(t.Union([t.String({ maxLength: 65535 }), t.Null()])),
});
export type OrderLineRequest = Static<typeof OrderLineRequest>;

const Lines = t.Array(OrderLineRequest, { maxItems: 500, description: 'Product lines; on update the list replaces all lines' });

/** POST /orders (and each item of POST /orders/batch). */
export const CreateOrderRequest = t.Object({
  reference: t.Optional(
    t.String({ minLength: 1, maxLength: 255, description: 'Unique per account; generated (`ORD-000001`, …) when omitted' }),
  ),
  enterprise_identifier: t.String({ minLength: 1, maxLength: 255, description: 'Contact id, name, e-mail or CIF' }),
  user_email: t.String({ format: 'email', maxLength: 255, description: "An account user's e-mail" }),
  opportunity_id: t.Optional(t.Union([Integer({ minimum: 1 }), t.Null()])),
  date_limit: t.String({ format: 'date', description: 'YYYY-MM-DD' }),
  state: Integer({ minimum: 0 }),
  comments: t.Optional(t.Union([t.String({ maxLength: 65535 }), t.Null()])),
  extra_fields: t.Optional(t.Union([ExtraFields, t.Null()])),
  products: t.Optional(Lines),
});
export type CreateOrderRequest = Static<typeof CreateOrderRequest>;

/** PUT/PATCH /orders/{reference}: partial; omitted fields are kept, null clears a nullable one. */
export const UpdateOrderRequest = t.Object({
  opportunity_id: t.Optional(t.Union([Integer({ minimum: 1 }), t.Null()])),
  date_limit: t.Optional(t.String({ format: 'date', description: 'YYYY-MM-DD' })),
  state: t.Optional(Integer({ minimum: 0 })),
  comments: t.Optional(t.Union([t.String({ maxLength: 65535 }), t.Null()])),
  extra_fields: t.Optional(t.Union([ExtraFields, t.Null()])),
  products: t.Optional(Lines),
});
export type UpdateOrderRequest = Static<typeof UpdateOrderRequest>;

/** POST /orders/batch. */
export const CreateOrdersBatchRequest = t.Object({ data: t.Array(CreateOrderRequest, { minItems: 1, maxItems: 100 }) });

/** A product line as the API returns it: a snapshot of the product taken when the line was written. */
export const OrderLine = t.Object({
  id: Integer({ description: 'Product id' }),
  reference: t.String(),
  name: t.String({ description: 'Product name when the line was written' }),
  pivot: t.Object({
    cost: t.Number(),
    price: t.Number(),
    discount: t.Number(),
    quantity: t.Number(),
    comment: t.Union([t.String(), t.Null()]),
    description: t.Union([t.String(), t.Null()]),
    rate_sku: t.Union([t.String(), t.Null()], { description: 'The rate the line was priced from' }),
  }),
});

/** One entry of an order's state history. */
export const OrderState = t.Object({
  id: Integer(),
  state: Integer(),
  amount: t.Number({ description: 'Order total when the state was entered' }),
  created_at: t.String({ format: 'date-time' }),
});

/** The Order resource. */
export const Order = t.Object({
  id: Integer(),
  reference: t.String(),
  enterprise_id: Integer(),
  user_id: Integer(),
  opportunity_id: t.Union([Integer(), t.Null()]),
  date_limit: t.String({ format: 'date' }),
  state: Integer(),
  comments: t.Union([t.String(), t.Null()]),
  extra_fields: t.Union([ExtraFields, t.Null()]),
  total: t.Number({ description: 'Σ price × quantity × (1 − discount/100), rounded to 2 decimals' }),
  states: t.Array(OrderState),
  products: t.Array(OrderLine),
  created_at: t.String({ format: 'date-time' }),
  updated_at: t.String({ format: 'date-time' }),
});
export type Order = Static<typeof Order>;

export const OrderEnvelope = t.Object({ data: Order });
export const OrderList = t.Object({ data: t.Array(Order), pagination: Pagination });
export const OrderBatchResponse = t.Object({ data: t.Array(Order) });
export const Deleted = t.Object({ deleted: t.Boolean() });

import { Order } from '@crm/contracts';
import {
  DateOnly,
  ExtraFields,
  Id,
  ListPagination,
  listQueryWith,
  MAX_INT,
  Money,
  Name,
  NonNegativeInt,
  Percentage,
  Quantity,
  QueryId,
} from '@crm/http';
import { type Static, Type } from '@sinclair/typebox';
import { t } from 'elysia';

// Request schemas are plain TypeBox (JSON integers and numbers, never coerced strings) with the
// shared bounds of contract §19; every object refuses unknown fields at its own depth.
const closed = { additionalProperties: false } as const;
const LongText = () => Type.Union([Type.String({ maxLength: 65535 }), Type.Null()]);

/** One product line of an order request (a part of a body, like a contact's `LocationInput`). */
export const OrderLineInput = Type.Object(
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
  {
    ...closed,
    title: 'OrderLineInput',
    examples: [{ reference: 'WIDGET-1', rate_sku: 'WIDGET-1-STD', quantity: 10, discount: 5, comment: 'Blue ones' }],
  },
);
export type OrderLineInput = Static<typeof OrderLineInput>;

const Lines = Type.Array(OrderLineInput, {
  maxItems: 500,
  description: 'Product lines; on update the list replaces all lines. Each line total and the order total must be at most 999999999999.99',
});

/** POST /orders (and each item of POST /orders/batch). */
export const OrderCreate = Type.Object(
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
  {
    ...closed,
    title: 'OrderCreate',
    examples: [
      {
        reference: 'ORD-2027-0001',
        enterprise_identifier: 'Acme Ltd',
        user_email: 'demo@example.com',
        date_limit: '2027-01-31',
        state: 1,
        comments: 'Deliver to the Madrid office',
        products: [{ reference: 'WIDGET-1', rate_sku: 'WIDGET-1-STD', quantity: 10, discount: 5, comment: 'Blue ones' }],
      },
    ],
  },
);
export type OrderCreate = Static<typeof OrderCreate>;

/** PUT/PATCH /orders/{reference}: partial; omitted fields are kept, null clears a nullable one. */
export const OrderUpdate = Type.Object(
  {
    opportunity_id: Type.Optional(Type.Union([Id(), Type.Null()])),
    date_limit: Type.Optional(DateOnly({ description: 'YYYY-MM-DD, 0001-01-01..9999-12-31' })),
    state: Type.Optional(NonNegativeInt({ description: '0..2147483647' })),
    comments: Type.Optional(LongText()),
    extra_fields: Type.Optional(Type.Union([ExtraFields(), Type.Null()])),
    products: Type.Optional(Lines),
  },
  { ...closed, title: 'OrderUpdate', examples: [{ state: 2, comments: 'Shipped on 2027-01-20' }] },
);
export type OrderUpdate = Static<typeof OrderUpdate>;

/** POST /orders/batch. */
export const OrderBatch = Type.Object(
  { data: Type.Array(OrderCreate, { minItems: 1, maxItems: 100 }) },
  {
    ...closed,
    title: 'OrderBatch',
    examples: [
      {
        data: [
          {
            enterprise_identifier: 'Acme Ltd',
            user_email: 'demo@example.com',
            date_limit: '2027-02-28',
            state: 1,
            products: [{ reference: 'WIDGET-1', quantity: 2 }],
          },
          { enterprise_identifier: 'B12345678', user_email: 'demo@example.com', date_limit: '2027-03-31', state: 0 },
        ],
      },
    ],
  },
);

/** GET /orders query. */
export const OrderListQuery = listQueryWith({
  enterprise_id: QueryId('Only orders of this contact id'),
  state: t.Optional(t.Integer({ minimum: 0, maximum: MAX_INT, description: 'Only orders in this state (0..2147483647)' })),
  opportunity_id: QueryId('Only orders of this opportunity'),
});

/** `{reference}` of the order routes: any text (NUL refused by the kit); one that names no order is simply not found. */
export const OrderParams = t.Object({ reference: t.String({ description: 'The order reference, URL-encoded' }) });

// Response schemas: the Order resource of @crm/contracts (what is stored; the database holds the same bounds).
export const OrderResponse = Type.Object({ data: Order }, { title: 'OrderResponse' });
export const OrderListResponse = Type.Object({ data: Type.Array(Order), pagination: ListPagination }, { title: 'OrderListResponse' });
export const OrderBatchResponse = Type.Object({ data: Type.Array(Order) }, { title: 'OrderBatchResponse' });

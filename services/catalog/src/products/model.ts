import { Product } from '@crm/contracts';
import { ListPagination, listQueryWith, Money, Name, Percentage, QueryId } from '@crm/http';
import { type Static, Type } from '@sinclair/typebox';

// Response schemas are the public ones of @crm/contracts (the event payloads use them too);
// only the request schemas live here.

/** The most items a batch may have (contract §4). */
export const MAX_BATCH = 100;
/** The longest `description` or `services` text, in characters. */
export const MAX_TEXT = 65_535;

export const RateInput = Type.Object(
  {
    sku: Name({ description: 'Unique per account, 1..255 characters' }),
    cost: Type.Optional(Money({ description: 'Unit cost 0..999999999999.99, default 0; rounded to 2 decimals' })),
    price: Money({ description: 'Unit price 0..999999999999.99; rounded to 2 decimals' }),
    primary: Type.Optional(Type.Boolean({ description: 'At most one rate is primary; when none is, the first one is' })),
  },
  { additionalProperties: false, title: 'RateInput', examples: [{ sku: 'WIDGET-1-STD', cost: 20, price: 49.9, primary: true }] },
);
export type RateInput = Static<typeof RateInput>;

const Rates = (description?: string) => Type.Array(RateInput, { minItems: 1, maxItems: 100, description });
const Text = () => Type.Union([Type.String({ maxLength: MAX_TEXT }), Type.Null()]);
const Vat = () => Percentage({ description: 'VAT percentage, 0..100' });
const Stock = () => Type.Union([Money(), Type.Null()], { description: '0..999999999999.99 or null' });
const CategoryRef = () => Name({ description: 'Reference of one of your product categories' });

export const ProductCreate = Type.Object(
  {
    reference: Name({ description: 'Unique per account; identifies the product in paths' }),
    name: Name(),
    description: Type.Optional(Text()),
    vat: Vat(),
    product_category_ref: CategoryRef(),
    services: Type.Optional(Text()),
    stock: Type.Optional(Stock()),
    rates: Rates(),
  },
  {
    additionalProperties: false,
    title: 'ProductCreate',
    examples: [
      {
        reference: 'WIDGET-1',
        name: 'Widget',
        description: 'A sturdy widget',
        vat: 21,
        product_category_ref: 'hardware',
        stock: 250,
        rates: [{ sku: 'WIDGET-1-STD', cost: 20, price: 49.9, primary: true }],
      },
    ],
  },
);
export type ProductCreate = Static<typeof ProductCreate>;

export const ProductUpdate = Type.Object(
  {
    name: Type.Optional(Name()),
    description: Type.Optional(Text()),
    vat: Type.Optional(Vat()),
    product_category_ref: Type.Optional(CategoryRef()),
    services: Type.Optional(Text()),
    stock: Type.Optional(Stock()),
    rates: Type.Optional(Rates('Replaces all rates; a rate keeps its id when its sku stays')),
  },
  {
    additionalProperties: false,
    title: 'ProductUpdate',
    examples: [
      {
        name: 'Widget Pro',
        rates: [
          { sku: 'WIDGET-1-STD', cost: 20, price: 54.9, primary: true },
          { sku: 'WIDGET-1-BULK', cost: 18, price: 45 },
        ],
      },
    ],
  },
);
export type ProductUpdate = Static<typeof ProductUpdate>;

export const ProductBatch = Type.Object(
  { data: Type.Array(ProductCreate, { minItems: 1, maxItems: MAX_BATCH }) },
  {
    additionalProperties: false,
    title: 'ProductBatch',
    examples: [
      {
        data: [
          {
            reference: 'CABLE-1',
            name: 'USB-C cable',
            vat: 21,
            product_category_ref: 'hardware',
            rates: [{ sku: 'CABLE-1-STD', price: 9.9 }],
          },
          {
            reference: 'SUPPORT-1',
            name: 'Support plan',
            vat: 21,
            product_category_ref: 'hardware',
            services: 'Next-day on-site support',
            rates: [{ sku: 'SUPPORT-1-YEAR', price: 1200 }],
          },
        ],
      },
    ],
  },
);
export type ProductBatch = Static<typeof ProductBatch>;

/** What an upsert item is matched on (contract §23). */
export const ID_PROPERTIES = ['reference', 'sku'] as const;
export type IdProperty = (typeof ID_PROPERTIES)[number];

/**
 * One item of `POST /products/batch/upsert`: every field of a create body, each optional here
 * because a match is updated with PUT semantics; the rules require what a creation needs.
 * `sku` (only with `id_property: "sku"`) is the matching key, not a field of the product.
 */
export const ProductUpsertItem = Type.Object(
  {
    reference: Type.Optional(
      Name({ description: 'With id_property reference: the matching key. With sku: required to create; cannot change a match' }),
    ),
    sku: Type.Optional(
      Name({
        description: 'Only with id_property sku: matches the product that has a rate with this sku; a creation must list it in rates',
      }),
    ),
    name: Type.Optional(Name()),
    description: Type.Optional(Text()),
    vat: Type.Optional(Vat()),
    product_category_ref: Type.Optional(CategoryRef()),
    services: Type.Optional(Text()),
    stock: Type.Optional(Stock()),
    rates: Type.Optional(Rates('Required to create; on a match it replaces all rates, a rate keeps its id when its sku stays')),
  },
  { additionalProperties: false, title: 'ProductUpsertItem', examples: [{ sku: 'WIDGET-1-STD', stock: 240 }] },
);
export type ProductUpsertItem = Static<typeof ProductUpsertItem>;

export const ProductUpsert = Type.Object(
  {
    id_property: Type.Union(
      ID_PROPERTIES.map((name) => Type.Literal(name)),
      { description: 'What each item is matched on within your account' },
    ),
    data: Type.Array(ProductUpsertItem, { minItems: 1, maxItems: MAX_BATCH }),
  },
  {
    additionalProperties: false,
    title: 'ProductUpsert',
    examples: [
      {
        id_property: 'sku',
        data: [
          { sku: 'WIDGET-1-STD', stock: 240 },
          {
            sku: 'GADGET-1-STD',
            reference: 'GADGET-1',
            name: 'Gadget',
            vat: 21,
            product_category_ref: 'hardware',
            rates: [{ sku: 'GADGET-1-STD', price: 19.9 }],
          },
        ],
      },
    ],
  },
);
export type ProductUpsert = Static<typeof ProductUpsert>;

export const ProductListQuery = listQueryWith({
  q: Type.Optional(Type.String({ description: 'Case-insensitive substring of the name or reference' })),
  product_category_id: QueryId('Only products of this category (not of its descendants), 1..2147483647'),
});
export type ProductListQuery = Static<typeof ProductListQuery>;

export const ProductParams = Type.Object({ reference: Type.String({ description: 'Product reference, URL-encoded' }) });

export const ProductResponse = Type.Object({ data: Product }, { title: 'ProductResponse' });
export const ProductListResponse = Type.Object({ data: Type.Array(Product), pagination: ListPagination }, { title: 'ProductListResponse' });
export const ProductBatchResponse = Type.Object(
  { data: Type.Array(Product, { description: 'The products, in request order' }) },
  { title: 'ProductBatchResponse' },
);
export const ProductUpsertResponse = Type.Object(
  {
    data: Type.Array(Product, { description: 'The products, in request order' }),
    created: Type.Array(Type.Boolean(), {
      description: 'Per item, in request order: true when it was created, false when it updated a match',
    }),
  },
  { title: 'ProductUpsertResponse' },
);

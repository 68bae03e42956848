import { listQueryWith, Pagination } from '@crm/db';
import { Type } from '@sinclair/typebox';
import { type Static, t } from 'elysia';
import { ProductCategory } from '../categories/model.ts';

/** Largest amount numeric(14,2) holds. */
const MAX_AMOUNT = 999_999_999_999;
const Amount = (description: string) => t.Number({ minimum: 0, maximum: MAX_AMOUNT, description });

export const RateInput = t.Object({
  sku: t.String({ minLength: 1, maxLength: 255, description: 'Unique per account' }),
  cost: t.Optional(Amount('Unit cost, default 0; rounded to 2 decimals')),
  price: Amount('Unit price; rounded to 2 decimals'),
  primary: t.Optional(t.Boolean({ description: 'At most one rate is primary; when none is, the first one is' })),
});
export type RateInput = Static<typeof RateInput>;

const Rates = t.Array(RateInput, { minItems: 1, maxItems: 100 });
const Text = t.Union([t.String({ maxLength: 65_535 }), t.Null()]);
const Vat = t.Number({ minimum: 0, maximum: 100, description: 'VAT percentage, 0..100' });
const Stock = t.Union([t.Number({ minimum: 0, maximum: MAX_AMOUNT }), t.Null()]);
const CategoryRef = t.String({ minLength: 1, maxLength: 255, description: 'Reference of one of your product categories' });

export const CreateProductBody = t.Object({
  reference: t.String({ minLength: 1, maxLength: 255, description: 'Unique per account; identifies the product in paths' }),
  name: t.String({ minLength: 1, maxLength: 255 }),
  description: t.Optional(Text),
  vat: Vat,
  product_category_ref: CategoryRef,
  services: t.Optional(Text),
  stock: t.Optional(Stock),
  rates: Rates,
});
export type CreateProductBody = Static<typeof CreateProductBody>;

export const UpdateProductBody = t.Object({
  name: t.Optional(t.String({ minLength: 1, maxLength: 255 })),
  description: t.Optional(Text),
  vat: t.Optional(Vat),
  product_category_ref: t.Optional(CategoryRef),
  services: t.Optional(Text),
  stock: t.Optional(Stock),
  rates: t.Optional(
    t.Array(RateInput, { minItems: 1, maxItems: 100, description: 'Replaces all rates; a rate keeps its id when its sku stays' }),
  ),
});
export type UpdateProductBody = Static<typeof UpdateProductBody>;

export const BatchProductBody = t.Object({ data: t.Array(CreateProductBody, { minItems: 1, maxItems: 100 }) });

export const Rate = t.Object({ id: Type.Integer(), sku: t.String(), cost: t.Number(), price: t.Number(), primary: t.Boolean() });
export type Rate = Static<typeof Rate>;

export const Product = t.Object({
  id: Type.Integer(),
  reference: t.String(),
  name: t.String(),
  description: t.Union([t.String(), t.Null()]),
  vat_id: Type.Integer({ description: "The account's VAT rate with the requested percentage" }),
  product_category_id: Type.Integer(),
  services: t.Union([t.String(), t.Null()]),
  stock: t.Union([t.Number(), t.Null()]),
  rates: t.Array(Rate),
  category: ProductCategory,
  created_at: t.String({ format: 'date-time' }),
  updated_at: t.String({ format: 'date-time' }),
});
export type Product = Static<typeof Product>;

export const ProductQuery = listQueryWith({
  q: t.Optional(t.String({ description: 'Case-insensitive substring of the name or reference' })),
  product_category_id: t.Optional(
    t.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'Only products of this category (not of its descendants)' }),
  ),
});
export type ProductQuery = Static<typeof ProductQuery>;

export const ReferenceParams = t.Object({ reference: t.String({ description: 'Product reference, URL-encoded' }) });
export const ProductEnvelope = t.Object({ data: Product });
export const ProductList = t.Object({ data: t.Array(Product), pagination: Pagination });

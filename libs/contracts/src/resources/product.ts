import { type Static, Type } from '@sinclair/typebox';
import { EXAMPLE_INSTANT, Instant, Nullable } from './common.ts';

const categoryFields = {
  id: Type.Integer(),
  name: Type.String(),
  reference: Type.String(),
  parent_id: Nullable(Type.Integer(), { description: 'null for a root category' }),
  has_products: Type.Boolean({ description: 'true when this category itself has products' }),
  has_objectives: Type.Boolean({ description: 'always false; objectives are not part of this API' }),
  created_at: Instant(),
  updated_at: Instant(),
};

const categoryExample = {
  id: 1,
  name: 'Hardware',
  reference: 'hardware',
  parent_id: null,
  has_products: true,
  has_objectives: false,
  created_at: EXAMPLE_INSTANT,
  updated_at: EXAMPLE_INSTANT,
};
const rateExample = { id: 1, sku: 'WIDGET-1-STD', cost: 20, price: 49.9, primary: true };

/** A product category without its children (the `category` of a product). */
export const ProductCategory = Type.Object(categoryFields, { title: 'ProductCategory', examples: [categoryExample] });
export type ProductCategory = Static<typeof ProductCategory>;

export type ProductCategoryTree = ProductCategory & { children: ProductCategoryTree[] };

/**
 * A product category with its whole subtree in `children`. Wrapped in Unsafe only to give
 * TypeScript the recursive type.
 */
export const ProductCategoryTree = Type.Unsafe<ProductCategoryTree>(
  Type.Recursive(
    (self) => Type.Object({ ...categoryFields, children: Type.Array(self, { description: 'direct children, each with its own subtree' }) }),
    {
      $id: 'ProductCategoryTree',
      examples: [
        {
          ...categoryExample,
          children: [{ ...categoryExample, id: 2, name: 'Cables', reference: 'cables', parent_id: 1, has_products: false, children: [] }],
        },
      ],
    },
  ),
);

/** A price rate of a product. */
export const Rate = Type.Object(
  {
    id: Type.Integer(),
    sku: Type.String(),
    cost: Type.Number(),
    price: Type.Number(),
    primary: Type.Boolean(),
  },
  { title: 'Rate', examples: [rateExample] },
);
export type Rate = Static<typeof Rate>;

/** A product as the API returns it (contract §14). */
export const Product = Type.Object(
  {
    id: Type.Integer(),
    reference: Type.String(),
    name: Type.String(),
    description: Nullable(Type.String()),
    vat_id: Type.Integer({ description: "The account's VAT rate with the requested percentage" }),
    product_category_id: Type.Integer(),
    services: Nullable(Type.String()),
    stock: Nullable(Type.Number()),
    rates: Type.Array(Rate),
    category: ProductCategory,
    created_at: Instant(),
    updated_at: Instant(),
  },
  {
    title: 'Product',
    examples: [
      {
        id: 1,
        reference: 'WIDGET-1',
        name: 'Widget',
        description: 'A sturdy widget',
        vat_id: 1,
        product_category_id: 1,
        services: null,
        stock: 250,
        rates: [rateExample],
        category: categoryExample,
        created_at: EXAMPLE_INSTANT,
        updated_at: EXAMPLE_INSTANT,
      },
    ],
  },
);
export type Product = Static<typeof Product>;

import { Pagination } from '@crm/db';
import { Type } from '@sinclair/typebox';
import { type Static, t } from 'elysia';

const Reference = t.String({ minLength: 1, maxLength: 255, description: 'Unique per account' });
const Name = t.String({ minLength: 1, maxLength: 255 });

/** Fields every category response carries (the `category` of a product has exactly these). */
const categoryFields = {
  id: Type.Integer(),
  name: t.String(),
  reference: t.String(),
  parent_id: t.Union([Type.Integer(), t.Null()], { description: 'null for a root category' }),
  has_products: t.Boolean({ description: 'true when this category itself has products' }),
  has_objectives: t.Boolean({ description: 'always false; objectives are not part of this API' }),
  created_at: t.String({ format: 'date-time' }),
  updated_at: t.String({ format: 'date-time' }),
};

/** A product category without its children. */
export const ProductCategory = t.Object(categoryFields);
export type ProductCategory = Static<typeof ProductCategory>;

export type ProductCategoryTree = ProductCategory & { children: ProductCategoryTree[] };

/**
 * A product category with its whole subtree in `children`. Wrapped in Unsafe only to give
 * TypeScript the recursive type (Elysia infers `children: never[]` from t.Recursive).
 */
export const ProductCategoryTree = t.Unsafe<ProductCategoryTree>(
  t.Recursive(
    (self) => t.Object({ ...categoryFields, children: t.Array(self, { description: 'direct children, each with its own subtree' }) }),
    { $id: 'ProductCategoryTree' },
  ),
);

export const CreateCategoryBody = t.Object({
  name: Name,
  reference: Reference,
  parent_id: t.Optional(
    t.Union([Type.Integer({ minimum: 0, maximum: 2_147_483_647 }), t.Null()], { description: 'omit, 0 or null for a root category' }),
  ),
});
export type CreateCategoryBody = Static<typeof CreateCategoryBody>;

export const UpdateCategoryBody = t.Object({
  name: t.Optional(Name),
  reference: t.Optional(Reference),
  parent_id: t.Optional(
    t.Union([Type.Integer({ minimum: 0, maximum: 2_147_483_647 }), t.Null()], { description: '0 or null moves the category to the root' }),
  ),
});
export type UpdateCategoryBody = Static<typeof UpdateCategoryBody>;

export const CategoryIdParams = t.Object({ id: t.String({ description: 'Numeric category id' }) });
export const CategoryEnvelope = t.Object({ data: ProductCategoryTree });
export const CategoryPage = t.Object({ data: t.Array(ProductCategoryTree), pagination: Pagination });

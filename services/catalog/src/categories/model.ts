import { ListPagination, Name, NonNegativeInt } from '@crm/http';
import { Type } from '@sinclair/typebox';
import { type Static, t } from 'elysia';

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

const Reference = () => Name({ description: 'Unique per account, 1..255 characters' });
/** `parent_id`: 0..2147483647 (0 = root, contract §19) or null. */
const ParentId = (description: string) => Type.Optional(Type.Union([NonNegativeInt(), Type.Null()], { description }));

export const CreateCategoryBody = Type.Object(
  {
    name: Name(),
    reference: Reference(),
    parent_id: ParentId('omit, 0 or null for a root category'),
  },
  { additionalProperties: false },
);
export type CreateCategoryBody = Static<typeof CreateCategoryBody>;

export const UpdateCategoryBody = Type.Object(
  {
    name: Type.Optional(Name()),
    reference: Type.Optional(Reference()),
    parent_id: ParentId('0 or null moves the category to the root'),
  },
  { additionalProperties: false },
);
export type UpdateCategoryBody = Static<typeof UpdateCategoryBody>;

export const CategoryEnvelope = t.Object({ data: ProductCategoryTree });
export const CategoryPage = t.Object({ data: t.Array(ProductCategoryTree), pagination: ListPagination });

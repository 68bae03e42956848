import { ProductCategoryTree } from '@crm/contracts';
import { IdParams, ListPagination, ListQuery, Name, NonNegativeInt } from '@crm/http';
import { type Static, Type } from '@sinclair/typebox';

// Response schemas are the public ones of @crm/contracts (the event payloads use them too);
// only the request schemas live here.

const Reference = () => Name({ description: 'Unique per account, 1..255 characters' });
/** `parent_id`: 0..2147483647 (0 = root, contract §19) or null. */
const ParentId = (description: string) => Type.Optional(Type.Union([NonNegativeInt(), Type.Null()], { description }));

export const ProductCategoryCreate = Type.Object(
  {
    name: Name(),
    reference: Reference(),
    parent_id: ParentId('omit, 0 or null for a root category'),
  },
  { additionalProperties: false, title: 'ProductCategoryCreate', examples: [{ name: 'Hardware', reference: 'hardware' }] },
);
export type ProductCategoryCreate = Static<typeof ProductCategoryCreate>;

export const ProductCategoryUpdate = Type.Object(
  {
    name: Type.Optional(Name()),
    reference: Type.Optional(Reference()),
    parent_id: ParentId('0 or null moves the category to the root'),
  },
  { additionalProperties: false, title: 'ProductCategoryUpdate', examples: [{ name: 'Hardware and accessories' }] },
);
export type ProductCategoryUpdate = Static<typeof ProductCategoryUpdate>;

/** `{id}` of a category path: 1..2147483647, anything else is a 404. */
export const ProductCategoryParams = IdParams;
export const ProductCategoryListQuery = ListQuery;

export const ProductCategoryResponse = Type.Object({ data: ProductCategoryTree }, { title: 'ProductCategoryResponse' });
export const ProductCategoryListResponse = Type.Object(
  { data: Type.Array(ProductCategoryTree), pagination: ListPagination },
  { title: 'ProductCategoryListResponse' },
);

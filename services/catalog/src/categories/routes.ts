import { listPagination, listRequest } from '@crm/db';
import { Deleted, jsonBody, listQuery, requestContext, throwIfInvalid } from '@crm/http';
import { exactlyOnce, type RequestWrite } from '@crm/idempotency';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import type { CatalogDatabase } from '../db/database.ts';
import {
  ProductCategoryCreate,
  ProductCategoryListQuery,
  ProductCategoryListResponse,
  ProductCategoryParams,
  ProductCategoryResponse,
  ProductCategoryUpdate,
} from './model.ts';
import { CATEGORY_SORTS } from './repo.ts';
import { createRules, updateRules } from './rules.ts';
import { createCategory, deleteCategoryById, getCategoryTree, listCategoryTrees, updateCategoryById } from './service.ts';

const SORT_NAMES = Object.keys(CATEGORY_SORTS);
const tags = ['Product categories'];

/** What the OpenAPI document says of conditional writes on one category (contract §24). */
const IF_MATCH =
  '`If-Match` (optional): the write happens only when it equals the current `ETag` (or is `*`), else 412 `precondition_failed` and nothing changes; a 412 is not stored under an `Idempotency-Key`. The ETag covers the category with its subtree, so it changes when a descendant changes too.';

/**
 * Public product category routes under /v1/product-categories; a path id outside 1..2147483647
 * is a 404. Writes go through `write.db` (exactly-once with an Idempotency-Key, contract §21).
 */
export function productCategoriesRoutes(db: Kysely<CatalogDatabase>) {
  const update = {
    params: ProductCategoryParams,
    ...jsonBody(ProductCategoryUpdate, updateRules(db)),
    response: { 200: ProductCategoryResponse },
    detail: {
      summary: 'Rename, re-reference or move a category',
      description: `\`parent_id\` 0 or null moves it to the root; moving it under itself or one of its descendants is a 422. ${IF_MATCH}`,
      tags,
    },
  };
  const updateHandler = async ({
    params,
    body,
    tenantId,
    ifMatch,
    write,
  }: {
    params: { id: number };
    body: ProductCategoryUpdate;
    tenantId: string;
    ifMatch?: string;
    write: RequestWrite;
  }) => ({
    data: await updateCategoryById(write.db, tenantId, params.id, body, ifMatch),
  });

  return new Elysia({ name: 'catalog-categories' })
    .use(requestContext)
    .use(exactlyOnce(db))
    .get(
      '/v1/product-categories',
      async ({ query, tenantId }) => {
        const { request, errors } = listRequest(query, CATEGORY_SORTS);
        throwIfInvalid(errors);
        const { page, trees } = await listCategoryTrees(db, tenantId, request);
        return { data: trees, pagination: listPagination(page, request) };
      },
      {
        ...listQuery(ProductCategoryListQuery, SORT_NAMES),
        response: { 200: ProductCategoryListResponse },
        detail: {
          summary: 'List root categories with their subtrees',
          description: [
            'Paginates the roots (`sort` on id, name, reference, created_at, updated_at; `updated_since` applies to the roots); each carries its full `children` tree.',
            'Page mode (`page`, counted) or cursor mode: send `pagination.next_cursor` as `cursor` to continue after the last root with the same sort and `updated_since`, without counting (`total`, `current_page`, `last_page` are null). A cursor with another sort or `updated_since`, a malformed one, or `cursor` with `page` → 422 on `cursor`.',
            'The `Link` header (RFC 8288) has first/prev/next/last page URLs in page mode and the next cursor URL in cursor mode.',
          ].join('\n\n'),
          tags,
        },
      },
    )
    .post(
      '/v1/product-categories',
      async ({ body, tenantId, set, write }) => {
        const category = await createCategory(write.db, tenantId, body);
        set.status = 201;
        return { data: category };
      },
      {
        ...jsonBody(ProductCategoryCreate, createRules(db)),
        response: { 201: ProductCategoryResponse },
        detail: {
          summary: 'Create a product category',
          description: '`parent_id` omitted or 0 creates a root category. The answer carries its `ETag`.',
          tags,
        },
      },
    )
    .get('/v1/product-categories/:id', async ({ params, tenantId }) => ({ data: await getCategoryTree(db, tenantId, params.id) }), {
      params: ProductCategoryParams,
      response: { 200: ProductCategoryResponse },
      detail: {
        summary: 'Get a category with its subtree',
        description:
          'The answer carries a strong `ETag` (of the category with its subtree); `If-None-Match` with the current one → 304 without a body.',
        tags,
      },
    })
    .put('/v1/product-categories/:id', updateHandler, update)
    .patch('/v1/product-categories/:id', updateHandler, {
      ...update,
      detail: { ...update.detail, summary: 'Update a category (same as PUT)' },
    })
    .delete(
      '/v1/product-categories/:id',
      async ({ params, tenantId, ifMatch, write }) => {
        await deleteCategoryById(write.db, tenantId, params.id, ifMatch);
        return { deleted: true };
      },
      {
        params: ProductCategoryParams,
        response: { 200: Deleted },
        detail: { summary: 'Delete a category', description: `409 conflict while it has products or child categories. ${IF_MATCH}`, tags },
      },
    );
}

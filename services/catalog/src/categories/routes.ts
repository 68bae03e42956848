import { ListQuery, pageRequest, paginationOf } from '@crm/db';
import { Deleted, IdParams, jsonBody, listQuery, requestContext, throwIfInvalid } from '@crm/http';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import type { CatalogDatabase } from '../db/database.ts';
import { CategoryEnvelope, CategoryPage, CreateCategoryBody, UpdateCategoryBody } from './model.ts';
import { createRules, updateRules } from './rules.ts';
import { createCategory, deleteCategoryById, getCategoryTree, listCategoryTrees, updateCategoryById } from './service.ts';

const SORTABLE = ['id', 'name', 'reference', 'created_at', 'updated_at'] as const;
const tags = ['Product categories'];

/** Public product category routes under /v1/product-categories; a path id outside 1..2147483647 is a 404. */
export function categoryRoutes(db: Kysely<CatalogDatabase>) {
  const update = {
    params: IdParams,
    ...jsonBody(UpdateCategoryBody, updateRules(db)),
    response: { 200: CategoryEnvelope },
    detail: {
      summary: 'Rename, re-reference or move a category',
      description: '`parent_id` 0 or null moves it to the root; moving it under itself or one of its descendants is a 422.',
      tags,
    },
  };
  const updateHandler = async ({ params, body, tenantId }: { params: { id: number }; body: UpdateCategoryBody; tenantId: string }) => ({
    data: await updateCategoryById(db, tenantId, params.id, body),
  });

  return new Elysia({ name: 'catalog-categories' })
    .use(requestContext)
    .get(
      '/v1/product-categories',
      async ({ query, tenantId }) => {
        const { request, errors } = pageRequest(query, SORTABLE);
        throwIfInvalid(errors);
        const { total, trees } = await listCategoryTrees(db, tenantId, request);
        return { data: trees, pagination: paginationOf(total, request.perPage, request.page) };
      },
      {
        ...listQuery(ListQuery, SORTABLE),
        response: { 200: CategoryPage },
        detail: {
          summary: 'List root categories with their subtrees',
          description: 'Paginates the roots; each carries its full `children` tree.',
          tags,
        },
      },
    )
    .post(
      '/v1/product-categories',
      async ({ body, tenantId, set }) => {
        const category = await createCategory(db, tenantId, body);
        set.status = 201;
        return { data: category };
      },
      {
        ...jsonBody(CreateCategoryBody, createRules(db)),
        response: { 201: CategoryEnvelope },
        detail: { summary: 'Create a product category', description: '`parent_id` omitted or 0 creates a root category.', tags },
      },
    )
    .get('/v1/product-categories/:id', async ({ params, tenantId }) => ({ data: await getCategoryTree(db, tenantId, params.id) }), {
      params: IdParams,
      response: { 200: CategoryEnvelope },
      detail: { summary: 'Get a category with its subtree', tags },
    })
    .put('/v1/product-categories/:id', updateHandler, update)
    .patch('/v1/product-categories/:id', updateHandler, {
      ...update,
      detail: { ...update.detail, summary: 'Update a category (same as PUT)' },
    })
    .delete(
      '/v1/product-categories/:id',
      async ({ params, tenantId }) => {
        await deleteCategoryById(db, tenantId, params.id);
        return { deleted: true };
      },
      {
        params: IdParams,
        response: { 200: Deleted },
        detail: { summary: 'Delete a category', description: '409 conflict while it has products or child categories.', tags },
      },
    );
}

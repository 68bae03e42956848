import { ListQuery, pageRequest, paginationOf } from '@crm/db';
import { notFound, requestContext, validationError } from '@crm/http';
import { Elysia, t } from 'elysia';
import type { Kysely } from 'kysely';
import type { CatalogDatabase } from '../db/database.ts';
import { CategoryEnvelope, CategoryIdParams, CategoryPage, CreateCategoryBody, UpdateCategoryBody } from './model.ts';
import { createCategory, deleteCategoryById, getCategoryTree, listCategoryTrees, updateCategoryById } from './service.ts';

const SORTABLE = ['id', 'name', 'reference', 'created_at', 'updated_at'] as const;
const tags = ['Product categories'];
const MAX_ID = 2_147_483_647;

/** The numeric id of a path; anything else names no category (404). */
function categoryId(raw: string): number {
  const id = /^[0-9]{1,10}$/.test(raw) ? Number(raw) : 0;
  if (id < 1 || id > MAX_ID) throw notFound('Product category');
  return id;
}

/** Public product category routes under /v1/product-categories. */
export function categoryRoutes(db: Kysely<CatalogDatabase>) {
  const update = {
    params: CategoryIdParams,
    body: UpdateCategoryBody,
    response: { 200: CategoryEnvelope },
    detail: {
      summary: 'Rename, re-reference or move a category',
      description: '`parent_id` 0 or null moves it to the root; moving it under itself or one of its descendants is a 422.',
      tags,
    },
  };
  const updateHandler = async ({ params, body, tenantId }: { params: { id: string }; body: UpdateCategoryBody; tenantId: string }) => ({
    data: await updateCategoryById(db, tenantId, categoryId(params.id), body),
  });

  return new Elysia({ name: 'catalog-categories' })
    .use(requestContext)
    .get(
      '/v1/product-categories',
      async ({ query, tenantId }) => {
        const { request, errors } = pageRequest(query, SORTABLE);
        if (errors.length > 0) throw validationError(errors);
        const { total, trees } = await listCategoryTrees(db, tenantId, request);
        return { data: trees, pagination: paginationOf(total, request.perPage, request.page) };
      },
      {
        query: ListQuery,
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
        body: CreateCategoryBody,
        response: { 201: CategoryEnvelope },
        detail: { summary: 'Create a product category', description: '`parent_id` omitted or 0 creates a root category.', tags },
      },
    )
    .get(
      '/v1/product-categories/:id',
      async ({ params, tenantId }) => ({ data: await getCategoryTree(db, tenantId, categoryId(params.id)) }),
      {
        params: CategoryIdParams,
        response: { 200: CategoryEnvelope },
        detail: { summary: 'Get a category with its subtree', tags },
      },
    )
    .put('/v1/product-categories/:id', updateHandler, update)
    .patch('/v1/product-categories/:id', updateHandler, {
      ...update,
      detail: { ...update.detail, summary: 'Update a category (same as PUT)' },
    })
    .delete(
      '/v1/product-categories/:id',
      async ({ params, tenantId }) => {
        await deleteCategoryById(db, tenantId, categoryId(params.id));
        return { deleted: true };
      },
      {
        params: CategoryIdParams,
        response: { 200: t.Object({ deleted: t.Boolean() }) },
        detail: { summary: 'Delete a category', description: '409 conflict while it has products or child categories.', tags },
      },
    );
}

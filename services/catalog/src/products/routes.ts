import { pageRequest, paginationOf } from '@crm/db';
import { Deleted, jsonBody, listQuery, requestContext, throwIfInvalid } from '@crm/http';
import { Elysia, t } from 'elysia';
import type { Kysely } from 'kysely';
import type { CatalogDatabase } from '../db/database.ts';
import { createProducts } from './create.ts';
import {
  BatchProductBody,
  CreateProductBody,
  ProductEnvelope,
  ProductList,
  ProductQuery,
  ReferenceParams,
  UpdateProductBody,
} from './model.ts';
import { batchRules, productRules } from './rules.ts';
import { deleteProductByReference, getProduct, listProductPage, updateProductByReference } from './service.ts';

const SORTABLE = ['id', 'reference', 'name', 'created_at', 'updated_at'] as const;
const tags = ['Products'];

/** Public product routes under /v1/products. */
export function productRoutes(db: Kysely<CatalogDatabase>) {
  const update = {
    params: ReferenceParams,
    ...jsonBody(UpdateProductBody, productRules(db)),
    response: { 200: ProductEnvelope },
    detail: {
      summary: 'Update a product',
      description:
        'Partial update: omitted fields are kept, null clears a nullable field. `rates`, when given, replaces the list; a rate whose sku stays keeps its id.',
      tags,
    },
  };
  const updateHandler = async ({
    params,
    body,
    tenantId,
  }: {
    params: { reference: string };
    body: UpdateProductBody;
    tenantId: string;
  }) => ({
    data: await updateProductByReference(db, tenantId, params.reference, body),
  });

  return new Elysia({ name: 'catalog-products' })
    .use(requestContext)
    .get(
      '/v1/products',
      async ({ query, tenantId }) => {
        const { request, errors } = pageRequest(query, SORTABLE);
        throwIfInvalid(errors);
        const { total, products } = await listProductPage(db, tenantId, request, { q: query.q, categoryId: query.product_category_id });
        return { data: products, pagination: paginationOf(total, request.perPage, request.page) };
      },
      {
        ...listQuery(ProductQuery, SORTABLE),
        response: { 200: ProductList },
        detail: {
          summary: 'List products',
          description: 'Filters: `q`, `product_category_id`, `updated_since`; `sort` on id, reference, name, created_at, updated_at.',
          tags,
        },
      },
    )
    .post(
      '/v1/products',
      async ({ body, tenantId, set }) => {
        const [product] = await createProducts(db, tenantId, [body], () => '');
        set.status = 201;
        return { data: product };
      },
      {
        ...jsonBody(CreateProductBody, productRules(db)),
        response: { 201: ProductEnvelope },
        detail: {
          summary: 'Create a product',
          description:
            '`vat` selects (or creates) your VAT rate with that percentage; `product_category_ref` is a category reference. When no rate is primary, the first one is.',
          tags,
        },
      },
    )
    .post(
      '/v1/products/batch',
      async ({ body, tenantId, set }) => {
        const products = await createProducts(db, tenantId, body.data, (i) => `data[${i}].`);
        set.status = 201;
        return { data: products };
      },
      {
        ...jsonBody(BatchProductBody, batchRules(db)),
        response: { 201: t.Object({ data: t.Array(ProductEnvelope.properties.data) }) },
        detail: {
          summary: 'Create up to 100 products',
          description: 'All or nothing: one invalid item fails the batch, with fields like `data[3].name`.',
          tags,
        },
      },
    )
    .get('/v1/products/:reference', async ({ params, tenantId }) => ({ data: await getProduct(db, tenantId, params.reference) }), {
      params: ReferenceParams,
      response: { 200: ProductEnvelope },
      detail: { summary: 'Get a product by reference', tags },
    })
    .put('/v1/products/:reference', updateHandler, update)
    .patch('/v1/products/:reference', updateHandler, { ...update, detail: { ...update.detail, summary: 'Update a product (same as PUT)' } })
    .delete(
      '/v1/products/:reference',
      async ({ params, tenantId }) => {
        await deleteProductByReference(db, tenantId, params.reference);
        return { deleted: true };
      },
      { params: ReferenceParams, response: { 200: Deleted }, detail: { summary: 'Delete a product', tags } },
    );
}

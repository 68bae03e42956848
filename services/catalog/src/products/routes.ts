import { listPagination, listRequest } from '@crm/db';
import { Deleted, jsonBody, listQuery, requestContext, throwIfInvalid } from '@crm/http';
import { exactlyOnce, type RequestWrite } from '@crm/idempotency';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import type { CatalogDatabase } from '../db/database.ts';
import { createProducts } from './create.ts';
import {
  ProductBatch,
  ProductBatchResponse,
  ProductCreate,
  ProductListQuery,
  ProductListResponse,
  ProductParams,
  ProductResponse,
  ProductUpdate,
  ProductUpsert,
  ProductUpsertResponse,
} from './model.ts';
import { PRODUCT_SORTS } from './repo.ts';
import { batchRules, productRules } from './rules.ts';
import { deleteProductByReference, getProduct, listProductPage, updateProductByReference } from './service.ts';
import { upsertProducts } from './upsert.ts';
import { upsertRules } from './upsert-rules.ts';

const SORT_NAMES = Object.keys(PRODUCT_SORTS);
const tags = ['Products'];

/** What the OpenAPI document says of conditional requests on one product (contract §24). */
const ETAG_READ = 'The answer carries a strong `ETag`; `If-None-Match` with the current one → 304 without a body.';
const ETAG_WRITE =
  '`If-Match` (optional): the write happens only when it equals the current `ETag` (or is `*`), else 412 `precondition_failed` and nothing changes; a 412 is not stored under an `Idempotency-Key`, so the same key may be retried with a fresh ETag. The answer carries the new `ETag`.';

/** Public product routes under /v1/products; writes go through `write.db` (exactly-once with an Idempotency-Key, contract §21). */
export function productsRoutes(db: Kysely<CatalogDatabase>) {
  const update = {
    params: ProductParams,
    ...jsonBody(ProductUpdate, productRules(db)),
    response: { 200: ProductResponse },
    detail: {
      summary: 'Update a product',
      description: `Partial update: omitted fields are kept, null clears a nullable field. \`rates\`, when given, replaces the list; a rate whose sku stays keeps its id. ${ETAG_WRITE}`,
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
    params: { reference: string };
    body: ProductUpdate;
    tenantId: string;
    ifMatch?: string;
    write: RequestWrite;
  }) => ({
    data: await updateProductByReference(write.db, tenantId, params.reference, body, ifMatch),
  });

  return new Elysia({ name: 'catalog-products' })
    .use(requestContext)
    .use(exactlyOnce(db))
    .get(
      '/v1/products',
      async ({ query, tenantId }) => {
        const filters = { q: query.q, product_category_id: query.product_category_id };
        const { request, errors } = listRequest(query, PRODUCT_SORTS, filters);
        throwIfInvalid(errors);
        const { page, products } = await listProductPage(db, tenantId, request, { q: query.q, categoryId: query.product_category_id });
        return { data: products, pagination: listPagination(page, request) };
      },
      {
        ...listQuery(ProductListQuery, SORT_NAMES),
        response: { 200: ProductListResponse },
        detail: {
          summary: 'List products',
          description: [
            'Filters: `q`, `product_category_id`, `updated_since`; `sort` on id, reference, name, created_at, updated_at (`-field` descending, ties by id).',
            'Page mode (`page`, counted) or cursor mode: send `pagination.next_cursor` as `cursor` to continue after the last item with the same sort and filters, without counting (`total`, `current_page`, `last_page` are null); a walk by id, reference, name or created_at returns every product that existed for the whole walk exactly once. A cursor with another sort or filters, a malformed one, or `cursor` with `page` → 422 on `cursor`.',
            'The `Link` header (RFC 8288) has first/prev/next/last page URLs in page mode and the next cursor URL in cursor mode.',
          ].join('\n\n'),
          tags,
        },
      },
    )
    .post(
      '/v1/products',
      async ({ body, tenantId, set, write }) => {
        const [product] = await createProducts(write.db, tenantId, [body], () => '');
        set.status = 201;
        return { data: product };
      },
      {
        ...jsonBody(ProductCreate, productRules(db)),
        response: { 201: ProductResponse },
        detail: {
          summary: 'Create a product',
          description:
            "`vat` selects (or creates) your VAT rate with that percentage; `product_category_ref` is a category reference. When no rate is primary, the first one is. The answer carries the product's `ETag`.",
          tags,
        },
      },
    )
    .post(
      '/v1/products/batch',
      async ({ body, tenantId, set, write }) => {
        const products = await createProducts(write.db, tenantId, body.data, (i) => `data[${i}].`);
        set.status = 201;
        return { data: products };
      },
      {
        ...jsonBody(ProductBatch, batchRules(db)),
        response: { 201: ProductBatchResponse },
        detail: {
          summary: 'Create up to 100 products',
          description: 'All or nothing: one invalid item fails the batch, with fields like `data[3].name`.',
          tags,
        },
      },
    )
    .post('/v1/products/batch/upsert', async ({ body, tenantId, write }) => upsertProducts(write.db, tenantId, body), {
      ...jsonBody(ProductUpsert, upsertRules(db)),
      response: { 200: ProductUpsertResponse },
      detail: {
        summary: 'Create or update up to 100 products, matched by reference or sku',
        description: [
          'Each item is matched within your account on `id_property`: `reference`, or `sku` (a top-level `sku` in each item, used only for matching: it matches the product that has a rate with that sku). A match is updated with PUT semantics (omitted fields kept, `rates` replace the list, a rate keeps its id when its sku stays; its reference does not change); no match is created, and must then be a full create body (with `sku`: including `reference`, and `rates` that include that sku).',
          'Answers 200 `{ data: [products in request order], created: [true when created, false when updated] }` and records `product.created` or `product.updated` per item. All or nothing: an item without its id value → 422 on `data[i].<id_property>`; two items with the same value (or, by sku, matching the same product) → 422 on the later one; every create/update rule applies with `data[i].` fields, all in one 422; a reference or sku of another product → 409. Concurrent upserts of the same new reference or sku never create two products.',
        ].join('\n\n'),
        tags,
      },
    })
    .get('/v1/products/:reference', async ({ params, tenantId }) => ({ data: await getProduct(db, tenantId, params.reference) }), {
      params: ProductParams,
      response: { 200: ProductResponse },
      detail: { summary: 'Get a product by reference', description: ETAG_READ, tags },
    })
    .put('/v1/products/:reference', updateHandler, update)
    .patch('/v1/products/:reference', updateHandler, { ...update, detail: { ...update.detail, summary: 'Update a product (same as PUT)' } })
    .delete(
      '/v1/products/:reference',
      async ({ params, tenantId, ifMatch, write }) => {
        await deleteProductByReference(write.db, tenantId, params.reference, ifMatch);
        return { deleted: true };
      },
      {
        params: ProductParams,
        response: { 200: Deleted },
        detail: {
          summary: 'Delete a product',
          description:
            '`If-Match` (optional): deletes only when it equals the current `ETag` (or is `*`), else 412 `precondition_failed` and nothing changes.',
          tags,
        },
      },
    );
}

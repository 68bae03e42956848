import { listPagination, listRequest } from '@crm/db';
import { Deleted, jsonBody, listQuery, requestContext, throwIfInvalid } from '@crm/http';
import { exactlyOnce, type RequestWrite } from '@crm/idempotency';
import { Elysia } from 'elysia';
import {
  OrderBatch,
  OrderBatchResponse,
  OrderCreate,
  OrderListQuery,
  OrderListResponse,
  OrderParams,
  OrderResponse,
  OrderUpdate,
} from './model.ts';
import { presentOrder } from './present.ts';
import { listOrders, ORDER_SORTS } from './repo.ts';
import { batchOrders, orderRules, singleOrder } from './rules.ts';
import { createOrders, deleteOrderByReference, getOrder, type OrdersDeps, updateOrder } from './service.ts';

const SORT_NAMES = Object.keys(ORDER_SORTS);
const tags = ['Orders'];

/** What the OpenAPI document says of conditional requests on one order (contract §24). */
const ETAG_READ =
  'The answer carries a strong `ETag` (of the order with its lines and states); `If-None-Match` with the current one → 304 without a body.';
const IF_MATCH =
  '`If-Match` (optional): the write happens only when it equals the current `ETag` (or is `*`), else 412 `precondition_failed` and nothing changes (no state entry, no event); a 412 is not stored under an `Idempotency-Key`, so the same key may be retried with a fresh ETag.';

const UPDATE_DESCRIPTION =
  'Partial update: omitted fields are kept, `null` clears a nullable field. `products` replaces every line. ' +
  'Changing `state` appends an entry to `states` (amount = the new total) and emits `order.state_changed`. ' +
  `${IF_MATCH} The answer carries the new \`ETag\`.`;

const LIST_DESCRIPTION = [
  `Filters: \`enterprise_id\`, \`state\`, \`opportunity_id\`, \`updated_since\`; \`sort\` on ${SORT_NAMES.join(', ')} (\`-field\` descending, ties by id).`,
  'Page mode (`page`, counted: `total`, `current_page`, `last_page`) or cursor mode: send `pagination.next_cursor` as `cursor` to continue after the last item with the same sort and filters, without counting (those three are null). A cursor walk by id, reference, date_limit or created_at returns every order that existed for the whole walk exactly once; by state or updated_at, an order changed during the walk may come again or be passed. A cursor with another sort or filters, a malformed one, or `cursor` with `page` → 422 on `cursor`.',
  "The `Link` header (RFC 8288) has first/prev/next/last page URLs in page mode and the next cursor URL in cursor mode, with the request's `per_page`, `sort` and filters.",
].join('\n\n');

interface UpdateContext {
  params: { reference: string };
  body: OrderUpdate;
  tenantId: string;
  requestId: string;
  ifMatch?: string;
  write: RequestWrite;
}

/** Orders (contract §13): CRUD and batch create under /v1/orders. */
export function ordersRoutes(deps: OrdersDeps) {
  // A body that fails its schema is refused by `jsonBody` with the rule failures of its
  // well-formed parts in the same 422; a valid one gets the same rules in the service.
  const createBody = jsonBody(OrderCreate, orderRules(deps, singleOrder, { parties: true }));
  const batchBody = jsonBody(OrderBatch, orderRules(deps, batchOrders, { parties: true }));
  const updateBody = jsonBody(OrderUpdate, orderRules(deps, singleOrder, { parties: false }));
  // A write reads and writes through `write.db`: the keyed write's one transaction (contract §21) or the pool.
  const writing = (write: RequestWrite): OrdersDeps => ({ ...deps, db: write.db });
  const update = ({ params, body, tenantId, requestId, ifMatch, write }: UpdateContext) =>
    updateOrder(writing(write), { tenantId, requestId }, params.reference, body, ifMatch).then((data) => ({ data }));
  const updateHook = { params: OrderParams, ...updateBody, response: { 200: OrderResponse } };
  return new Elysia({ name: 'sales-orders' })
    .use(requestContext)
    .use(exactlyOnce(deps.db))
    .post(
      '/v1/orders',
      async ({ body, tenantId, requestId, set, write }) => {
        const [order] = await createOrders(writing(write), { tenantId, requestId }, [body], () => '');
        set.status = 201;
        return { data: order as NonNullable<typeof order> };
      },
      {
        ...createBody,
        response: { 201: OrderResponse },
        detail: {
          summary: 'Create an order',
          tags,
          description:
            'Lines are priced from the catalog (`rate_sku`, default the primary rate) and keep a snapshot of the product. ' +
            'Without `reference`, the next `ORD-000001`-style reference of the account is generated; a given reference ' +
            "of that form moves the sequence past it, so generated references never collide. The answer carries the order's `ETag`.",
        },
      },
    )
    .post(
      '/v1/orders/batch',
      async ({ body, tenantId, requestId, set, write }) => {
        const data = await createOrders(writing(write), { tenantId, requestId }, body.data, (i) => `data[${i}].`);
        set.status = 201;
        return { data };
      },
      {
        ...batchBody,
        response: { 201: OrderBatchResponse },
        detail: {
          summary: 'Create up to 100 orders, all or nothing',
          tags,
          description:
            'Each item is a `POST /orders` body, created in request order (generated references follow that order). One invalid item fails the batch, with fields like `data[3].user_email`; nothing is created and no event is sent.',
        },
      },
    )
    .get(
      '/v1/orders',
      async ({ query, tenantId }) => {
        const filters = { enterprise_id: query.enterprise_id, state: query.state, opportunity_id: query.opportunity_id };
        // A cursor is bound to the sort, these filters and updated_since: replayed with others → 422 on `cursor`.
        const { request, errors } = listRequest(query, ORDER_SORTS, filters);
        throwIfInvalid(errors);
        const { page, orders } = await listOrders(deps.db, tenantId, filters, request);
        return { data: orders.map(presentOrder), pagination: listPagination(page, request) };
      },
      {
        ...listQuery(OrderListQuery, SORT_NAMES),
        response: { 200: OrderListResponse },
        detail: { summary: 'List orders', tags, description: LIST_DESCRIPTION },
      },
    )
    .get('/v1/orders/:reference', async ({ params, tenantId }) => ({ data: await getOrder(deps.db, tenantId, params.reference) }), {
      params: OrderParams,
      response: { 200: OrderResponse },
      detail: { summary: 'Get an order', tags, description: ETAG_READ },
    })
    .put('/v1/orders/:reference', update, { ...updateHook, detail: { summary: 'Update an order', tags, description: UPDATE_DESCRIPTION } })
    .patch('/v1/orders/:reference', update, {
      ...updateHook,
      detail: { summary: 'Update an order (same as PUT)', tags, description: UPDATE_DESCRIPTION },
    })
    .delete(
      '/v1/orders/:reference',
      async ({ params, tenantId, ifMatch, write }) => {
        await deleteOrderByReference(writing(write), tenantId, params.reference, ifMatch);
        return { deleted: true };
      },
      { params: OrderParams, response: { 200: Deleted }, detail: { summary: 'Delete an order', tags, description: IF_MATCH } },
    );
}

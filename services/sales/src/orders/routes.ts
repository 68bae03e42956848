import { listQueryWith, pageRequest, paginationOf } from '@crm/db';
import { Deleted, jsonBody, listQuery, MAX_INT, QueryId, requestContext, throwIfInvalid } from '@crm/http';
import { Elysia, t } from 'elysia';
import { CreateOrderRequest, CreateOrdersBatchRequest, OrderBatchResponse, OrderEnvelope, OrderList, UpdateOrderRequest } from './model.ts';
import { presentOrder } from './present.ts';
import { listOrders } from './repo.ts';
import { batchOrders, orderRules, singleOrder } from './rules.ts';
import { createOrders, deleteOrderByReference, getOrder, type OrdersDeps, updateOrder } from './service.ts';

const SORTABLE = ['id', 'reference', 'date_limit', 'state', 'created_at', 'updated_at'] as const;
const tags = ['Orders'];

const OrderListQuery = listQueryWith({
  enterprise_id: QueryId('Only orders of this contact id'),
  state: t.Optional(t.Integer({ minimum: 0, maximum: MAX_INT, description: 'Only orders in this state (0..2147483647)' })),
  opportunity_id: QueryId('Only orders of this opportunity'),
});
// A reference is free text (NUL refused by the kit); one that names no order is simply not found.
const ReferenceParams = t.Object({ reference: t.String({ description: 'The order reference, URL-encoded' }) });

const UPDATE_DESCRIPTION =
  'Partial update: omitted fields are kept, `null` clears a nullable field. `products` replaces every line. ' +
  'Changing `state` appends an entry to `states` (amount = the new total) and emits `order.state_changed`.';

interface UpdateContext {
  params: { reference: string };
  body: UpdateOrderRequest;
  tenantId: string;
  requestId: string;
}

/** Orders (contract §13): CRUD and batch create under /v1/orders. */
export function ordersRoutes(deps: OrdersDeps) {
  // A body that fails its schema is refused by `jsonBody` with the rule failures of its
  // well-formed parts in the same 422; a valid one gets the same rules in the service.
  const createBody = jsonBody(CreateOrderRequest, orderRules(deps, singleOrder, { parties: true }));
  const batchBody = jsonBody(CreateOrdersBatchRequest, orderRules(deps, batchOrders, { parties: true }));
  const updateBody = jsonBody(UpdateOrderRequest, orderRules(deps, singleOrder, { parties: false }));
  const update = ({ params, body, tenantId, requestId }: UpdateContext) =>
    updateOrder(deps, { tenantId, requestId }, params.reference, body).then((data) => ({ data }));
  const updateHook = { params: ReferenceParams, ...updateBody, response: { 200: OrderEnvelope } };
  return new Elysia({ name: 'sales-orders' })
    .use(requestContext)
    .post(
      '/v1/orders',
      async ({ body, tenantId, requestId, set }) => {
        const [order] = await createOrders(deps, { tenantId, requestId }, [body], () => '');
        set.status = 201;
        return { data: order as NonNullable<typeof order> };
      },
      {
        ...createBody,
        response: { 201: OrderEnvelope },
        detail: {
          summary: 'Create an order',
          tags,
          description:
            'Lines are priced from the catalog (`rate_sku`, default the primary rate) and keep a snapshot of the product. ' +
            'Without `reference`, the next `ORD-000001`-style reference of the account is generated; a given reference ' +
            'of that form moves the sequence past it, so generated references never collide.',
        },
      },
    )
    .post(
      '/v1/orders/batch',
      async ({ body, tenantId, requestId, set }) => {
        const data = await createOrders(deps, { tenantId, requestId }, body.data, (i) => `data[${i}].`);
        set.status = 201;
        return { data };
      },
      {
        ...batchBody,
        response: { 201: OrderBatchResponse },
        detail: { summary: 'Create up to 100 orders, all or nothing', tags },
      },
    )
    .get(
      '/v1/orders',
      async ({ query, tenantId }) => {
        const { request, errors } = pageRequest(query, SORTABLE);
        throwIfInvalid(errors); // listQuery already refused what pageRequest could object to
        const filters = { enterprise_id: query.enterprise_id, state: query.state, opportunity_id: query.opportunity_id };
        const { total, orders } = await listOrders(deps.db, tenantId, filters, request);
        return { data: orders.map(presentOrder), pagination: paginationOf(total, request.perPage, request.page) };
      },
      {
        ...listQuery(OrderListQuery, SORTABLE),
        response: { 200: OrderList },
        detail: { summary: 'List orders', tags, description: `Sortable by ${SORTABLE.join(', ')}.` },
      },
    )
    .get('/v1/orders/:reference', async ({ params, tenantId }) => ({ data: await getOrder(deps.db, tenantId, params.reference) }), {
      params: ReferenceParams,
      response: { 200: OrderEnvelope },
      detail: { summary: 'Get an order', tags },
    })
    .put('/v1/orders/:reference', update, { ...updateHook, detail: { summary: 'Update an order', tags, description: UPDATE_DESCRIPTION } })
    .patch('/v1/orders/:reference', update, {
      ...updateHook,
      detail: { summary: 'Update an order (same as PUT)', tags, description: UPDATE_DESCRIPTION },
    })
    .delete(
      '/v1/orders/:reference',
      async ({ params, tenantId }) => {
        await deleteOrderByReference(deps, tenantId, params.reference);
        return { deleted: true };
      },
      { params: ReferenceParams, response: { 200: Deleted }, detail: { summary: 'Delete an order', tags } },
    );
}

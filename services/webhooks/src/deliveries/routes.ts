import { listPagination, listRequest } from '@crm/db';
import { IdParams, ListPagination, listQuery, notFound, requestContext, throwIfInvalid } from '@crm/http';
import { Elysia, t } from 'elysia';
import { assertEnabled, type EndpointServiceDeps, getWebhook } from '../endpoints/service.ts';
import { LIST_DESCRIPTION } from '../openapi-text.ts';
import { Delivery, DeliveryListQuery, DeliveryParams, toDelivery } from './model.ts';
import { findAttempt, listAttempts, queueManualAttempt } from './repo.ts';

/** Sortable fields and their column types (keyset cursors cast their keys back with these). */
const SORT_TYPES = { id: 'integer', created_at: 'timestamptz' } as const;
const SORTABLE = Object.keys(SORT_TYPES);
const tags = ['Webhooks'];

/** An endpoint's delivery log and manual retries. */
export function deliveryRoutes(deps: EndpointServiceDeps) {
  return new Elysia({ name: 'webhooks-deliveries' })
    .use(requestContext)
    .get(
      '/v1/webhooks/:id/deliveries',
      async ({ params, query, tenantId }) => {
        const endpoint = await getWebhook(deps, tenantId, params.id);
        // A cursor is bound to the sort, the filters and the endpoint it was made for.
        const filters = { endpoint: endpoint.id, event_id: query.event_id, status: query.status };
        const { request, errors } = listRequest(query, SORT_TYPES, filters);
        throwIfInvalid(errors);
        const { page, rows } = await listAttempts(
          deps.db,
          tenantId,
          endpoint.id,
          { eventId: query.event_id, status: query.status },
          request,
        );
        return { data: rows.map(toDelivery), pagination: listPagination(page, request) };
      },
      {
        params: IdParams,
        ...listQuery(DeliveryListQuery, SORTABLE),
        response: { 200: t.Object({ data: t.Array(Delivery), pagination: ListPagination }) },
        detail: {
          summary: "List a webhook's delivery attempts",
          tags,
          description: `One row per attempt. Filters: event_id, status, updated_since (applies to created_at). Sort on id, created_at. ${LIST_DESCRIPTION}`,
        },
      },
    )
    .post(
      '/v1/webhooks/:id/deliveries/:delivery_id/retry',
      async ({ params, tenantId, set }) => {
        const endpoint = await getWebhook(deps, tenantId, params.id);
        const attempt = await findAttempt(deps.db, tenantId, endpoint.id, params.delivery_id);
        if (!attempt) throw notFound('Delivery');
        assertEnabled(endpoint);
        const queued = await queueManualAttempt(deps.db, attempt.task_id);
        if (!queued) throw notFound('Delivery');
        deps.onQueued();
        set.status = 202;
        return { data: toDelivery(queued) };
      },
      {
        params: DeliveryParams,
        response: { 202: t.Object({ data: Delivery }) },
        detail: {
          summary: 'Retry a delivery now',
          tags,
          description: 'Queues a new attempt of the same event (same `webhook-id`, fresh timestamp and signature); returns it as pending.',
        },
      },
    );
}

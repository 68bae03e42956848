import { Pagination, pageRequest, paginationOf } from '@crm/db';
import { IdParams, listQuery, notFound, requestContext, throwIfInvalid } from '@crm/http';
import { Elysia, t } from 'elysia';
import { assertEnabled, type EndpointServiceDeps, getWebhook } from '../endpoints/service.ts';
import { Delivery, DeliveryListQuery, DeliveryParams, toDelivery } from './model.ts';
import { findAttempt, listAttempts, queueManualAttempt } from './repo.ts';

const SORTABLE = ['id', 'created_at'] as const;
const tags = ['Webhooks'];

/** An endpoint's delivery log and manual retries. */
export function deliveryRoutes(deps: EndpointServiceDeps) {
  return new Elysia({ name: 'webhooks-deliveries' })
    .use(requestContext)
    .get(
      '/v1/webhooks/:id/deliveries',
      async ({ params, query, tenantId }) => {
        const endpoint = await getWebhook(deps, tenantId, params.id);
        const { request, errors } = pageRequest(query, SORTABLE);
        throwIfInvalid(errors);
        const { total, rows } = await listAttempts(
          deps.db,
          tenantId,
          endpoint.id,
          { eventId: query.event_id, status: query.status },
          request,
        );
        return { data: rows.map(toDelivery), pagination: paginationOf(total, request.perPage, request.page) };
      },
      {
        params: IdParams,
        ...listQuery(DeliveryListQuery, SORTABLE),
        response: { 200: t.Object({ data: t.Array(Delivery), pagination: Pagination }) },
        detail: {
          summary: "List a webhook's delivery attempts",
          tags,
          description: 'One row per attempt (sortable by id or created_at; filters event_id, status; updated_since applies to created_at).',
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

import { listPagination, listRequest } from '@crm/db';
import { listQuery, requestContext, throwIfInvalid } from '@crm/http';
import { exactlyOnce } from '@crm/idempotency';
import { Elysia } from 'elysia';
import type { WebhooksRoutesDeps } from '../endpoints/routes.ts';
import { getWebhook } from '../endpoints/service.ts';
import { LIST_DESCRIPTION } from '../openapi-text.ts';
import {
  DeliveryListQuery,
  DeliveryListResponse,
  DeliveryParams,
  DeliveryResponse,
  presentDelivery,
  WebhookDeliveriesParams,
} from './model.ts';
import { listAttempts } from './repo.ts';
import { retryDelivery } from './service.ts';

/** Sortable fields and their column types (keyset cursors cast their keys back with these). */
const SORT_TYPES = { id: 'integer', created_at: 'timestamptz' } as const;
const SORTABLE = Object.keys(SORT_TYPES);
const tags = ['Webhooks'];

/** An endpoint's delivery log and manual retries (the retry is exactly-once under an Idempotency-Key, contract §21). */
export function deliveriesRoutes(deps: WebhooksRoutesDeps) {
  return new Elysia({ name: 'webhooks-deliveries' })
    .use(requestContext)
    .use(exactlyOnce(deps.db))
    .get(
      '/v1/webhooks/:id/deliveries',
      async ({ params, query, tenantId }) => {
        const endpoint = await getWebhook(deps.db, tenantId, params.id);
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
        return { data: rows.map(presentDelivery), pagination: listPagination(page, request) };
      },
      {
        params: WebhookDeliveriesParams,
        ...listQuery(DeliveryListQuery, SORTABLE),
        response: { 200: DeliveryListResponse },
        detail: {
          summary: "List a webhook's delivery attempts",
          tags,
          description: `One row per attempt. Filters: event_id, status, updated_since (applies to created_at). Sort on id, created_at. ${LIST_DESCRIPTION}`,
        },
      },
    )
    .post(
      '/v1/webhooks/:id/deliveries/:delivery_id/retry',
      async ({ params, tenantId, set, write }) => {
        const queued = await retryDelivery(write.db, tenantId, params.id, params.delivery_id);
        set.status = 202;
        return { data: presentDelivery(queued) };
      },
      {
        params: DeliveryParams,
        response: { 202: DeliveryResponse },
        // After the answer, so a keyed write has committed: the worker would not see the attempt before.
        afterResponse: () => deps.onQueued(),
        detail: {
          summary: 'Retry a delivery now',
          tags,
          description: 'Queues a new attempt of the same event (same `webhook-id`, fresh timestamp and signature); returns it as pending.',
        },
      },
    );
}

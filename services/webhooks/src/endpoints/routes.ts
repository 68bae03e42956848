import { ListQuery, Pagination, pageRequest, paginationOf } from '@crm/db';
import { Deleted, IdParams, jsonBody, listQuery, type RuleCheck, requestContext, throwIfInvalid } from '@crm/http';
import { Elysia, t } from 'elysia';
import { eventCatalog } from './event-catalog.ts';
import { CreateWebhook, EventTypeInfo, Secret, toWebhook, UpdateWebhook, Webhook, WebhookWithSecret } from './model.ts';
import { listEndpoints } from './repo.ts';
import { webhookRuleErrors } from './rules.ts';
import * as service from './service.ts';

const SORTABLE = ['id', 'created_at', 'updated_at'] as const;
const tags = ['Webhooks'];

/** Webhook endpoint management under /v1/webhooks (contract §16). */
export function endpointRoutes(deps: service.EndpointServiceDeps) {
  // Also run when the schema fails, so one 422 names every failing field (contract §3).
  const rules: RuleCheck = (body) => webhookRuleErrors(body, deps.targetPolicy);
  const update = async ({ params, body, tenantId }: { params: { id: number }; body: UpdateWebhook; tenantId: string }) => ({
    data: toWebhook(await service.updateWebhook(deps, tenantId, params.id, body)),
  });
  const updateSpec = (method: string) => ({
    params: IdParams,
    ...jsonBody(UpdateWebhook, rules),
    response: { 200: t.Object({ data: Webhook }) },
    detail: {
      summary: `Update a webhook (${method}, partial)`,
      tags,
      description: 'Omitted fields are kept. `enabled: false` pauses deliveries.',
    },
  });

  return new Elysia({ name: 'webhooks-endpoints' })
    .use(requestContext)
    .get('/v1/webhooks/event-types', () => ({ data: eventCatalog }), {
      response: { 200: t.Object({ data: t.Array(EventTypeInfo) }) },
      detail: { summary: 'List the event types a webhook can subscribe to', tags },
    })
    .post(
      '/v1/webhooks',
      async ({ body, tenantId, set }) => {
        const row = await service.createWebhook(deps, tenantId, body);
        set.status = 201;
        return { data: { ...toWebhook(row), secret: row.secret } };
      },
      {
        ...jsonBody(CreateWebhook, rules),
        response: { 201: t.Object({ data: WebhookWithSecret }) },
        detail: {
          summary: 'Register a webhook endpoint',
          tags,
          description:
            'The URL must be http(s) and resolve to a public address (private, loopback and link-local targets are refused unless allowed by the operator). The secret is shown here and via GET /webhooks/{id}/secret.',
        },
      },
    )
    .get(
      '/v1/webhooks',
      async ({ query, tenantId }) => {
        const { request, errors } = pageRequest(query, SORTABLE);
        throwIfInvalid(errors);
        const { total, rows } = await listEndpoints(deps.db, tenantId, request);
        return { data: rows.map(toWebhook), pagination: paginationOf(total, request.perPage, request.page) };
      },
      {
        ...listQuery(ListQuery, SORTABLE),
        response: { 200: t.Object({ data: t.Array(Webhook), pagination: Pagination }) },
        detail: { summary: 'List webhook endpoints', tags },
      },
    )
    .get('/v1/webhooks/:id', async ({ params, tenantId }) => ({ data: toWebhook(await service.getWebhook(deps, tenantId, params.id)) }), {
      params: IdParams,
      response: { 200: t.Object({ data: Webhook }) },
      detail: { summary: 'Get a webhook endpoint', tags },
    })
    .put('/v1/webhooks/:id', update, updateSpec('PUT'))
    .patch('/v1/webhooks/:id', update, updateSpec('PATCH'))
    .delete(
      '/v1/webhooks/:id',
      async ({ params, tenantId }) => {
        await service.deleteWebhook(deps, tenantId, params.id);
        return { deleted: true };
      },
      {
        params: IdParams,
        response: { 200: Deleted },
        detail: { summary: 'Delete a webhook endpoint', tags, description: 'Queued deliveries and the delivery log go with it.' },
      },
    )
    .get(
      '/v1/webhooks/:id/secret',
      async ({ params, tenantId }) => ({
        data: { secret: (await service.getWebhook(deps, tenantId, params.id)).secret },
      }),
      { params: IdParams, response: { 200: t.Object({ data: Secret }) }, detail: { summary: "Get a webhook's signing secret", tags } },
    )
    .post(
      '/v1/webhooks/:id/rotate-secret',
      async ({ params, tenantId }) => ({
        data: { secret: await service.rotateWebhookSecret(deps, tenantId, params.id) },
      }),
      {
        params: IdParams,
        response: { 200: t.Object({ data: Secret }) },
        detail: {
          summary: "Rotate a webhook's signing secret",
          tags,
          description:
            'For 24 hours deliveries carry two signatures (new and old secret) in `webhook-signature`, so receivers can switch over.',
        },
      },
    )
    .post(
      '/v1/webhooks/:id/test',
      async ({ params, tenantId, set }) => {
        const eventId = await service.sendTestEvent(deps, tenantId, params.id);
        set.status = 202;
        return { data: { event_id: eventId } };
      },
      {
        params: IdParams,
        response: { 202: t.Object({ data: t.Object({ event_id: t.String() }) }) },
        detail: {
          summary: 'Send a webhook.test event',
          tags,
          description: "Sent whatever the endpoint's event filter; 409 while the endpoint is disabled.",
        },
      },
    );
}

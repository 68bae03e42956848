import { listPagination, listRequest } from '@crm/db';
import {
  Deleted,
  IdParams,
  jsonBody,
  ListPagination,
  ListQuery,
  listQuery,
  type RuleCheck,
  requestContext,
  throwIfInvalid,
} from '@crm/http';
import { Elysia, t } from 'elysia';
import { LIST_DESCRIPTION, READ_DESCRIPTION, WRITE_DESCRIPTION } from '../openapi-text.ts';
import { eventCatalog } from './event-catalog.ts';
import {
  CreateWebhook,
  EventTypeInfo,
  Secret,
  toWebhook,
  toWebhookWithSecret,
  UpdateWebhook,
  Webhook,
  WebhookWithSecret,
} from './model.ts';
import { listEndpoints } from './repo.ts';
import { webhookRuleErrors } from './rules.ts';
import * as service from './service.ts';

/** Sortable fields and their column types (keyset cursors cast their keys back with these). */
const SORT_TYPES = { id: 'integer', created_at: 'timestamptz', updated_at: 'timestamptz' } as const;
const SORTABLE = Object.keys(SORT_TYPES);
const tags = ['Webhooks'];

/** Webhook endpoint management under /v1/webhooks (contract §16). */
export function endpointRoutes(deps: service.EndpointServiceDeps) {
  // Also run when the schema fails, so one 422 names every failing field (contract §3).
  const rules: RuleCheck = (body) => webhookRuleErrors(body, deps.targetPolicy);
  const update = async ({
    params,
    body,
    tenantId,
    ifMatch,
  }: {
    params: { id: number };
    body: UpdateWebhook;
    tenantId: string;
    ifMatch: string | undefined;
  }) => ({
    data: toWebhook(await service.updateWebhook(deps, tenantId, params.id, body, ifMatch)),
  });
  const updateSpec = (method: string) => ({
    params: IdParams,
    ...jsonBody(UpdateWebhook, rules),
    response: { 200: t.Object({ data: Webhook }) },
    detail: {
      summary: `Update a webhook (${method}, partial)`,
      tags,
      description: `Omitted fields are kept. \`enabled: false\` pauses deliveries. ${WRITE_DESCRIPTION}`,
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
        return { data: toWebhookWithSecret(row) };
      },
      {
        ...jsonBody(CreateWebhook, rules),
        response: { 201: t.Object({ data: WebhookWithSecret }) },
        detail: {
          summary: 'Register a webhook endpoint',
          tags,
          description:
            "The URL must be http(s) and resolve to a public address (private, loopback and link-local targets are refused unless allowed by the operator). The secret is shown here and via GET /webhooks/{id}/secret. The answer's `ETag` may be sent as `If-Match` to PUT/PATCH/DELETE /webhooks/{id}.",
        },
      },
    )
    .get(
      '/v1/webhooks',
      async ({ query, tenantId }) => {
        // per_page, page, sort, updated_since and the cursor's length were checked (one 422) by `listQuery`.
        const { request, errors } = listRequest(query, SORT_TYPES);
        throwIfInvalid(errors);
        const { page, rows } = await listEndpoints(deps.db, tenantId, request);
        return { data: rows.map(toWebhook), pagination: listPagination(page, request) };
      },
      {
        ...listQuery(ListQuery, SORTABLE),
        response: { 200: t.Object({ data: t.Array(Webhook), pagination: ListPagination }) },
        detail: {
          summary: 'List webhook endpoints',
          tags,
          description: `Filter: updated_since. Sort on id, created_at, updated_at. ${LIST_DESCRIPTION}`,
        },
      },
    )
    .get('/v1/webhooks/:id', async ({ params, tenantId }) => ({ data: toWebhook(await service.getWebhook(deps, tenantId, params.id)) }), {
      params: IdParams,
      response: { 200: t.Object({ data: Webhook }) },
      detail: { summary: 'Get a webhook endpoint', tags, description: READ_DESCRIPTION },
    })
    .put('/v1/webhooks/:id', update, updateSpec('PUT'))
    .patch('/v1/webhooks/:id', update, updateSpec('PATCH'))
    .delete(
      '/v1/webhooks/:id',
      async ({ params, tenantId, ifMatch }) => {
        await service.deleteWebhook(deps, tenantId, params.id, ifMatch);
        return { deleted: true };
      },
      {
        params: IdParams,
        response: { 200: Deleted },
        detail: {
          summary: 'Delete a webhook endpoint',
          tags,
          description: `Queued deliveries and the delivery log go with it. ${WRITE_DESCRIPTION}`,
        },
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

import { eventCatalog } from '@crm/contracts';
import { listPagination, listRequest } from '@crm/db';
import { Deleted, jsonBody, listQuery, type RuleCheck, requestContext, throwIfInvalid } from '@crm/http';
import { exactlyOnce, type RequestWrite } from '@crm/idempotency';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import type { WebhooksDatabase } from '../db/database.ts';
import { LIST_DESCRIPTION, READ_DESCRIPTION, WRITE_DESCRIPTION } from '../openapi-text.ts';
import type { TargetPolicy } from '../ssrf/target-guard.ts';
import {
  EventTypeListResponse,
  presentWebhook,
  presentWebhookWithSecret,
  WebhookCreate,
  WebhookListQuery,
  WebhookListResponse,
  WebhookParams,
  WebhookResponse,
  WebhookSecretResponse,
  WebhookTestResponse,
  WebhookUpdate,
  WebhookWithSecretResponse,
} from './model.ts';
import { listEndpoints } from './repo.ts';
import { webhookRuleErrors } from './rules.ts';
import * as service from './service.ts';

export interface WebhooksRoutesDeps {
  db: Kysely<WebhooksDatabase>;
  /** Where webhook URLs may point (contract §20). */
  targetPolicy: TargetPolicy;
  /** Wakes the local delivery worker: a delivery was queued (called once the write has committed). */
  onQueued: () => void;
}

/** Sortable fields and their column types (keyset cursors cast their keys back with these). */
const SORT_TYPES = { id: 'integer', created_at: 'timestamptz', updated_at: 'timestamptz' } as const;
const SORTABLE = Object.keys(SORT_TYPES);
const tags = ['Webhooks'];

/** The event catalogue of @crm/contracts as plain JSON (the payload schemas without TypeBox's symbols). */
const eventTypeList = eventCatalog.map(({ type, description, payload }) => ({
  type,
  description,
  payload: JSON.parse(JSON.stringify(payload)) as Record<string, unknown>,
}));

/**
 * Webhook endpoint management under /v1/webhooks (contract §16). Every write goes through
 * `write.db`: with an Idempotency-Key it is exactly-once (contract §21).
 */
export function webhooksRoutes(deps: WebhooksRoutesDeps) {
  // Also run when the schema fails, so one 422 names every failing field (contract §3).
  const rules: RuleCheck = (body) => webhookRuleErrors(body, deps.targetPolicy);
  const update = async ({
    params,
    body,
    tenantId,
    ifMatch,
    write,
  }: {
    params: { id: number };
    body: WebhookUpdate;
    tenantId: string;
    ifMatch: string | undefined;
    write: RequestWrite;
  }) => ({
    data: presentWebhook(await service.updateWebhook(write.db, tenantId, params.id, body, { targetPolicy: deps.targetPolicy, ifMatch })),
  });
  const updateSpec = (method: string) => ({
    params: WebhookParams,
    ...jsonBody(WebhookUpdate, rules),
    response: { 200: WebhookResponse },
    detail: {
      summary: `Update a webhook (${method}, partial)`,
      tags,
      description: `Omitted fields are kept. \`enabled: false\` pauses deliveries. ${WRITE_DESCRIPTION}`,
    },
  });

  return new Elysia({ name: 'webhooks-endpoints' })
    .use(requestContext)
    .use(exactlyOnce(deps.db))
    .get('/v1/webhooks/event-types', () => ({ data: eventTypeList }), {
      response: { 200: EventTypeListResponse },
      detail: {
        summary: 'List the event types a webhook can subscribe to',
        tags,
        description:
          "Each type with what it means and the JSON Schema of its `data` (the same schemas the services' events are checked against).",
      },
    })
    .post(
      '/v1/webhooks',
      async ({ body, tenantId, set, write }) => {
        const row = await service.createWebhook(write.db, tenantId, body, deps.targetPolicy);
        set.status = 201;
        return { data: presentWebhookWithSecret(row) };
      },
      {
        ...jsonBody(WebhookCreate, rules),
        response: { 201: WebhookWithSecretResponse },
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
        return { data: rows.map(presentWebhook), pagination: listPagination(page, request) };
      },
      {
        ...listQuery(WebhookListQuery, SORTABLE),
        response: { 200: WebhookListResponse },
        detail: {
          summary: 'List webhook endpoints',
          tags,
          description: `Filter: updated_since. Sort on id, created_at, updated_at. ${LIST_DESCRIPTION}`,
        },
      },
    )
    .get(
      '/v1/webhooks/:id',
      async ({ params, tenantId }) => ({ data: presentWebhook(await service.getWebhook(deps.db, tenantId, params.id)) }),
      {
        params: WebhookParams,
        response: { 200: WebhookResponse },
        detail: { summary: 'Get a webhook endpoint', tags, description: READ_DESCRIPTION },
      },
    )
    .put('/v1/webhooks/:id', update, updateSpec('PUT'))
    .patch('/v1/webhooks/:id', update, updateSpec('PATCH'))
    .delete(
      '/v1/webhooks/:id',
      async ({ params, tenantId, ifMatch, write }) => {
        await service.deleteWebhook(write.db, tenantId, params.id, ifMatch);
        return { deleted: true };
      },
      {
        params: WebhookParams,
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
        data: { secret: (await service.getWebhook(deps.db, tenantId, params.id)).secret },
      }),
      {
        params: WebhookParams,
        response: { 200: WebhookSecretResponse },
        detail: {
          summary: "Get a webhook's signing secret",
          tags,
          description:
            'The current `whsec_…` secret that signs deliveries (see the `webhooks` section for verification). After `POST /webhooks/{id}/rotate-secret` this is the new secret; the old one keeps signing alongside it for 24 hours.',
        },
      },
    )
    .post(
      '/v1/webhooks/:id/rotate-secret',
      async ({ params, tenantId, write }) => ({
        data: { secret: await service.rotateWebhookSecret(write.db, tenantId, params.id) },
      }),
      {
        params: WebhookParams,
        response: { 200: WebhookSecretResponse },
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
      async ({ params, tenantId, set, write }) => {
        const eventId = await service.sendTestEvent(write.db, tenantId, params.id);
        set.status = 202;
        return { data: { event_id: eventId } };
      },
      {
        params: WebhookParams,
        response: { 202: WebhookTestResponse },
        // After the answer, so a keyed write has committed: the worker would not see the task before.
        afterResponse: () => deps.onQueued(),
        detail: {
          summary: 'Send a webhook.test event',
          tags,
          description: "Sent whatever the endpoint's event filter; 409 while the endpoint is disabled.",
        },
      },
    );
}

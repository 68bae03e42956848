import { eventDescriptions, eventTypes } from '@crm/contracts';
import { IdParams, ListPagination, ListQuery } from '@crm/http';
import { type Static, Type } from '@sinclair/typebox';
import { t } from 'elysia';
import type { Selectable } from 'kysely';
import type { EndpointsTable } from '../db/database.ts';
import { MAX_WEBHOOK_URL_LENGTH } from '../ssrf/webhook-url.ts';

/** At most this many event types in one filter. */
export const MAX_EVENT_FILTER = 100;
/** The longest description. */
export const MAX_DESCRIPTION = 255;

// Bodies are plain TypeBox (no coercion): `enabled: "true"` is not a boolean. Every object refuses
// unknown fields. Event type names and the URL's SSRF rules are checked by `rules.ts`.
const events = Type.Array(
  // `enum` documents what `rules.ts` enforces (with its own message); TypeBox does not check it on a string.
  Type.String({ enum: [...eventTypes, '*'], description: 'An event type from `GET /webhooks/event-types`, or `*` for all' }),
  {
    minItems: 1,
    maxItems: MAX_EVENT_FILTER,
    description: 'Event types to receive; omitted or `["*"]` = all (`webhook.test` is always sent by `POST /webhooks/{id}/test`)',
  },
);
const url = Type.String({
  maxLength: MAX_WEBHOOK_URL_LENGTH,
  description: 'http(s) URL receiving POSTs; must resolve to a public address; at most 2048 characters',
});
const description = Type.Union([Type.String({ maxLength: MAX_DESCRIPTION }), Type.Null()], {
  description: 'At most 255 characters; null clears it',
});

export const WebhookCreate = Type.Object(
  {
    url,
    events: Type.Optional(events),
    description: Type.Optional(description),
    enabled: Type.Optional(Type.Boolean({ description: 'Default true' })),
  },
  {
    additionalProperties: false,
    title: 'WebhookCreate',
    examples: [
      {
        url: 'https://example.com/webhooks/crm',
        events: ['contact.created', 'contact.updated', 'order.state_changed'],
        description: 'CRM sync',
      },
    ],
  },
);
export type WebhookCreate = Static<typeof WebhookCreate>;

export const WebhookUpdate = Type.Object(
  {
    url: Type.Optional(url),
    events: Type.Optional(events),
    description: Type.Optional(description),
    enabled: Type.Optional(Type.Boolean({ description: 'false pauses deliveries (they stay queued); true resumes them' })),
  },
  { additionalProperties: false, title: 'WebhookUpdate', examples: [{ events: ['*'], description: 'CRM sync (every event)' }] },
);
export type WebhookUpdate = Static<typeof WebhookUpdate>;

/** `{id}` of a webhook path: 1..2147483647, anything else is a 404. */
export const WebhookParams = IdParams;
export const WebhookListQuery = ListQuery;

// A webhook endpoint is this service's own resource (no other module or event carries it), so its
// schema lives here rather than in @crm/contracts.
const webhookExample = {
  id: 1,
  url: 'https://example.com/webhooks/crm',
  description: 'CRM sync',
  events: ['contact.created', 'contact.updated', 'order.state_changed'],
  enabled: true,
  disabled_reason: null,
  created_at: '2026-11-20T09:30:00.000Z',
  updated_at: '2026-11-20T09:30:00.000Z',
};
const secretExample = 'whsec_MfKQ9r8GKYqrTFu9q6TJ5vTwcSmxzPOlEAzWgDFuI0Q=';

export const Webhook = t.Object(
  {
    id: t.Integer(),
    url: t.String(),
    description: t.Union([t.String(), t.Null()]),
    events: t.Array(t.String({ enum: [...eventTypes, '*'] })),
    enabled: t.Boolean(),
    disabled_reason: t.Union([t.String(), t.Null()], { description: 'Why the service disabled the endpoint (e.g. it answered 410 Gone)' }),
    created_at: t.String({ format: 'date-time' }),
    updated_at: t.String({ format: 'date-time' }),
  },
  { title: 'Webhook', examples: [webhookExample] },
);
export type Webhook = typeof Webhook.static;

export const WebhookWithSecret = t.Object(
  {
    ...Webhook.properties,
    secret: t.String({ description: '`whsec_` + base64 of 32 random bytes; the HMAC key is the base64-decoded part' }),
  },
  { title: 'WebhookWithSecret', examples: [{ ...webhookExample, secret: secretExample }] },
);
export type WebhookWithSecret = typeof WebhookWithSecret.static;

export const WebhookSecret = t.Object({ secret: t.String() }, { title: 'WebhookSecret', examples: [{ secret: secretExample }] });

export const WebhookResponse = t.Object({ data: Webhook }, { title: 'WebhookResponse' });
export const WebhookWithSecretResponse = t.Object({ data: WebhookWithSecret }, { title: 'WebhookWithSecretResponse' });
export const WebhookListResponse = t.Object({ data: t.Array(Webhook), pagination: ListPagination }, { title: 'WebhookListResponse' });
export const WebhookSecretResponse = t.Object({ data: WebhookSecret }, { title: 'WebhookSecretResponse' });
export const WebhookTestResponse = t.Object(
  {
    data: t.Object({
      event_id: t.String({
        description: 'The `webhook.test` event sent (its `webhook-id`)',
        examples: ['evt_5f0c6a3e2b1d4c8e9a7f6b5c4d3e2f1a'],
      }),
    }),
  },
  { title: 'WebhookTestResponse' },
);

/** `GET /webhooks/event-types`: the catalogue of @crm/contracts (`eventCatalog`). */
export const EventTypeListResponse = t.Object(
  {
    data: t.Array(
      t.Object(
        {
          type: t.String({ enum: [...eventTypes] }),
          description: t.String(),
          payload: t.Record(t.String(), t.Unknown(), { description: "JSON Schema of the event's `data`" }),
        },
        {
          title: 'EventType',
          examples: [
            {
              type: 'contact.deleted',
              description: eventDescriptions['contact.deleted'],
              payload: {
                type: 'object',
                required: ['id'],
                properties: { id: { type: 'integer' }, reference: { type: 'string' } },
                additionalProperties: false,
              },
            },
          ],
        },
      ),
    ),
  },
  { title: 'EventTypeListResponse' },
);

/** The creation answer: the endpoint with its secret (same field order as the route has always sent). */
export function presentWebhookWithSecret(row: Selectable<EndpointsTable>): WebhookWithSecret {
  return { ...presentWebhook(row), secret: row.secret };
}

/** The API view of an endpoint row (never the secret). */
export function presentWebhook(row: Selectable<EndpointsTable>): Webhook {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.events,
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

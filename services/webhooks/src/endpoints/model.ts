import { t } from 'elysia';
import type { Selectable } from 'kysely';
import type { EndpointsTable } from '../db/database.ts';

const events = t.Array(t.String({ description: 'An event type from `GET /webhooks/event-types`, or `*` for all' }), {
  minItems: 1,
  maxItems: 100,
  description: 'Event types to receive; omitted or `["*"]` = all (`webhook.test` is always sent by `POST /webhooks/{id}/test`)',
});
const url = t.String({ maxLength: 2048, description: 'http(s) URL receiving POSTs; must resolve to a public address' });
const description = t.Union([t.String({ maxLength: 255 }), t.Null()]);

export const CreateWebhook = t.Object({
  url,
  events: t.Optional(events),
  description: t.Optional(description),
  enabled: t.Optional(t.Boolean({ default: true })),
});
export type CreateWebhook = typeof CreateWebhook.static;

export const UpdateWebhook = t.Object({
  url: t.Optional(url),
  events: t.Optional(events),
  description: t.Optional(description),
  enabled: t.Optional(t.Boolean({ description: 'false pauses deliveries (they stay queued); true resumes them' })),
});
export type UpdateWebhook = typeof UpdateWebhook.static;

export const Webhook = t.Object({
  id: t.Integer(),
  url: t.String(),
  description: t.Union([t.String(), t.Null()]),
  events: t.Array(t.String()),
  enabled: t.Boolean(),
  disabled_reason: t.Union([t.String(), t.Null()], { description: 'Why the service disabled the endpoint (e.g. it answered 410 Gone)' }),
  created_at: t.String({ format: 'date-time' }),
  updated_at: t.String({ format: 'date-time' }),
});
export type Webhook = typeof Webhook.static;

export const WebhookWithSecret = t.Object({
  ...Webhook.properties,
  secret: t.String({ description: '`whsec_` + base64 of 32 random bytes; the HMAC key is the base64-decoded part' }),
});

export const Secret = t.Object({ secret: t.String() });

export const EventTypeInfo = t.Object({ type: t.String(), description: t.String() });

export const IdParams = t.Object({ id: t.String() });

/** The API view of an endpoint row (never the secret). */
export function toWebhook(row: Selectable<EndpointsTable>): Webhook {
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

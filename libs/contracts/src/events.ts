import { type Static, Type } from '@sinclair/typebox';

/** Every event type the platform publishes (contract §16). */
export const eventTypes = [
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'opportunity.created',
  'opportunity.updated',
  'opportunity.deleted',
  'order.created',
  'order.updated',
  'order.deleted',
  'order.state_changed',
  'product.created',
  'product.updated',
  'product.deleted',
  'product_category.created',
  'product_category.updated',
  'product_category.deleted',
  'document.created',
  'document.deleted',
  'document.linked',
  'document.unlinked',
  'document.attached',
  'document.detached',
  'webhook.test',
] as const;

export type EventType = (typeof eventTypes)[number];

/** The message published on JetStream for each outbox row (subject `<prefix>.<type>`). */
export const EventEnvelope = Type.Object({
  id: Type.String({ description: 'evt_… unique id; also the JetStream Nats-Msg-Id and the webhook-id' }),
  type: Type.String(),
  tenant_id: Type.String(),
  occurred_at: Type.String({ format: 'date-time' }),
  data: Type.Unknown(),
});
export type EventEnvelope = Static<typeof EventEnvelope>;

/** A new event id: `evt_` followed by 32 hex characters. */
export function newEventId(): string {
  return `evt_${crypto.randomUUID().replace(/-/g, '')}`;
}

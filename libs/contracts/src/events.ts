import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import './formats.ts';
import { DeletedRef } from './resources/common.ts';
import { Contact } from './resources/contact.ts';
import { Document, DocumentAttachment, DocumentUnlinked } from './resources/document.ts';
import { Opportunity } from './resources/opportunity.ts';
import { Order, OrderStateChanged } from './resources/order.ts';
import { Product, ProductCategoryTree } from './resources/product.ts';

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

/** `webhook.test`: sent to one endpoint on request (contract §16). */
export const WebhookTest = Type.Object(
  { webhook_id: Type.Integer(), message: Type.String() },
  { title: 'WebhookTest', examples: [{ webhook_id: 1, message: 'This is a test event from the CRM API.' }] },
);

/**
 * The payload (`data`) of each event type: the resource exactly as the API returns it, or
 * `{ id, reference? }` for a deletion (contract §16). One source for the outbox writers (typed
 * by event type), the consumers (which validate), the event-types route and the OpenAPI
 * `webhooks` section.
 */
export const eventPayloads = {
  'contact.created': Contact,
  'contact.updated': Contact,
  'contact.deleted': DeletedRef,
  'opportunity.created': Opportunity,
  'opportunity.updated': Opportunity,
  'opportunity.deleted': DeletedRef,
  'order.created': Order,
  'order.updated': Order,
  'order.deleted': DeletedRef,
  'order.state_changed': OrderStateChanged,
  'product.created': Product,
  'product.updated': Product,
  'product.deleted': DeletedRef,
  'product_category.created': ProductCategoryTree,
  'product_category.updated': ProductCategoryTree,
  'product_category.deleted': DeletedRef,
  'document.created': Document,
  'document.deleted': DeletedRef,
  'document.linked': Document,
  'document.unlinked': DocumentUnlinked,
  'document.attached': DocumentAttachment,
  'document.detached': DocumentAttachment,
  'webhook.test': WebhookTest,
} satisfies Record<EventType, TSchema>;

/** The payload type of an event type. */
export type EventPayload<T extends EventType> = Static<(typeof eventPayloads)[T]>;

/** An event of any type with its matching payload (a union, so `type` narrows `data`). */
export type TypedEvent = { [T in EventType]: { type: T; data: EventPayload<T> } }[EventType];

const payloadChecks = new Map(Object.entries(eventPayloads).map(([type, schema]) => [type, TypeCompiler.Compile(schema as TSchema)]));

/** Whether a string names a published event type. */
export function isEventType(type: string): type is EventType {
  return payloadChecks.has(type);
}

/** Problems of an event payload against its type's schema (`/rates/0/price: Expected number`); empty when it conforms. */
export function eventPayloadErrors(type: EventType, data: unknown): string[] {
  const check = payloadChecks.get(type);
  if (!check) return [`unknown event type ${type}`];
  if (check.Check(data)) return [];
  return [...check.Errors(data)].slice(0, 10).map((e) => `${e.path || '/'}: ${e.message}`);
}

/** The message published on JetStream for each outbox row (subject `<prefix>.<type>`). */
export const EventEnvelope = Type.Object({
  id: Type.String({ description: 'evt_… unique id; also the JetStream Nats-Msg-Id and the webhook-id' }),
  type: Type.String({ description: 'One of eventTypes' }),
  tenant_id: Type.String(),
  occurred_at: Type.String({ format: 'date-time' }),
  data: Type.Unknown(),
});
export type EventEnvelope = Static<typeof EventEnvelope>;

/** A new event id: `evt_` followed by 32 hex characters. */
export function newEventId(): string {
  return `evt_${crypto.randomUUID().replace(/-/g, '')}`;
}

import type { TSchema } from '@sinclair/typebox';
import { type EventType, eventPayloads, eventTypes } from './events.ts';

const AS_RETURNED = 'data is the resource as the API returns it.';
const DELETED = 'data is { id, reference? }.';

/**
 * What each event type means, in one line: what happened and what its `data` is. One source for
 * the webhooks `event-types` route and the OpenAPI `webhooks` section (with `eventPayloads`).
 */
export const eventDescriptions = {
  'contact.created': `A contact was created; ${AS_RETURNED}`,
  'contact.updated': `A contact was updated; ${AS_RETURNED}`,
  'contact.deleted': `A contact was deleted; ${DELETED}`,
  'opportunity.created': `An opportunity was created; ${AS_RETURNED}`,
  'opportunity.updated': `An opportunity was updated; ${AS_RETURNED}`,
  'opportunity.deleted': `An opportunity was deleted; ${DELETED}`,
  'order.created': `An order was created; ${AS_RETURNED}`,
  'order.updated': `An order was updated; ${AS_RETURNED}`,
  'order.deleted': `An order was deleted; ${DELETED}`,
  'order.state_changed': "An order's state changed; data is the order plus previous_state.",
  'product.created': `A product was created; ${AS_RETURNED}`,
  'product.updated': `A product was updated; ${AS_RETURNED}`,
  'product.deleted': `A product was deleted; ${DELETED}`,
  'product_category.created': 'A product category was created; data is the category with its subtree, as the API returns it.',
  'product_category.updated': 'A product category was updated; data is the category with its subtree, as the API returns it.',
  'product_category.deleted': `A product category was deleted; ${DELETED}`,
  'document.created': `A document was created; ${AS_RETURNED}`,
  'document.deleted': `A document was deleted; ${DELETED}`,
  'document.linked': 'A document was linked to a contact; data is the document.',
  'document.unlinked': 'A document was unlinked from its contact; data is the document plus previous_contact_id.',
  'document.attached': 'A document was attached to an opportunity; data is the document plus opportunity_id.',
  'document.detached': 'A document was detached from an opportunity; data is the document plus opportunity_id.',
  'webhook.test': 'Sent by POST /webhooks/{id}/test to that endpoint only, whatever it subscribes to; never in the events feed.',
} satisfies Record<EventType, string>;

/** One entry of the event catalogue: the type, what it means, and the JSON Schema of its `data`. */
export interface EventTypeEntry {
  type: EventType;
  description: string;
  payload: TSchema;
}

/** Every event type in `eventTypes` order, with its description and payload schema. */
export const eventCatalog: readonly EventTypeEntry[] = eventTypes.map((type) => ({
  type,
  description: eventDescriptions[type],
  payload: eventPayloads[type],
}));

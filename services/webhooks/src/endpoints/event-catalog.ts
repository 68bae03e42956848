import { type EventType, eventTypes } from '@crm/contracts';

const resourceNames: Record<string, string> = {
  contact: 'A contact',
  opportunity: 'An opportunity',
  order: 'An order',
  product: 'A product',
  product_category: 'A product category',
  document: 'A document',
};

const special: Partial<Record<EventType, string>> = {
  'order.state_changed': "An order's state changed; data is the order plus previous_state.",
  'document.linked': 'A document was linked to a contact.',
  'document.unlinked': 'A document was unlinked from its contact.',
  'document.attached': 'A document was attached to an opportunity.',
  'document.detached': 'A document was detached from an opportunity.',
  'webhook.test': 'Sent by POST /webhooks/{id}/test, whatever the endpoint subscribes to.',
};

function describeEventType(type: EventType): string {
  const fixed = special[type];
  if (fixed) return fixed;
  const [resource = '', action = ''] = type.split('.');
  const subject = resourceNames[resource] ?? resource;
  const suffix = action === 'deleted' ? '; data is { id, reference? }.' : '; data is the resource as the API returns it.';
  return `${subject} was ${action}${suffix}`;
}

/** Every event type a webhook can subscribe to, with what it means (from `eventTypes` of @crm/contracts). */
export const eventCatalog = eventTypes.map((type) => ({ type, description: describeEventType(type) }));

const known = new Set<string>(eventTypes);

/** Whether a string is a known event type. */
export function isKnownEventType(type: string): boolean {
  return known.has(type);
}

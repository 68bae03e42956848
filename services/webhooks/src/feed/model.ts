import { eventTypes, isEventType } from '@crm/contracts';
import { type ErrorDetail, ListPagination, ListQuery } from '@crm/http';
import { t } from 'elysia';
import type { Selectable } from 'kysely';
import type { EventsTable } from '../db/database.ts';

/** Sent by `POST /webhooks/{id}/test` to one endpoint; never in the feed. */
export const TEST_EVENT_TYPE = 'webhook.test';

/** An event as the feed returns it: what a webhook delivery's body carries. */
export const FeedEvent = t.Object(
  {
    id: t.String({ description: '`evt_…`; also the `webhook-id` of its deliveries' }),
    type: t.String({
      enum: eventTypes.filter((type) => type !== TEST_EVENT_TYPE),
      description: 'An event type of `GET /webhooks/event-types` (never `webhook.test`)',
    }),
    timestamp: t.String({ format: 'date-time', description: 'When the change happened' }),
    data: t.Unknown({ description: 'The resource as the API returned it after the change; for deletions `{ id, reference? }`' }),
  },
  {
    title: 'FeedEvent',
    description: 'One event: the same `id`, `type`, `timestamp` and `data` as the body of its webhook deliveries',
    examples: [
      {
        id: 'evt_5f0c6a3e2b1d4c8e9a7f6b5c4d3e2f1a',
        type: 'order.deleted',
        timestamp: '2026-11-20T09:30:00.000Z',
        data: { id: 1, reference: 'ORD-2027-0001' },
      },
    ],
  },
);
export type FeedEvent = typeof FeedEvent.static;

const { sort: _sort, updated_since: _updatedSince, ...listParameters } = ListQuery.properties;

const since = (description: string) => t.Optional(t.String({ format: 'date-time', description }));

/** `GET /events` parameters: no `sort` (the order is the stream's), `type` and `created_since` filters. */
export const EventListQuery = t.Object(
  {
    ...listParameters,
    type: t.Optional(
      t.String({
        maxLength: 4096,
        description:
          'Only these event types: comma-separated, each one of `GET /webhooks/event-types` (`webhook.test` is never listed), e.g. `contact.created,contact.updated`',
      }),
    ),
    created_since: since('Only events whose `timestamp` is at or after this RFC 3339 instant (with Z or an offset)'),
    updated_since: since('Same as `created_since` (events never change); with both, the later one applies'),
  },
  { additionalProperties: true },
);

export const EventListResponse = t.Object({ data: t.Array(FeedEvent), pagination: ListPagination }, { title: 'EventListResponse' });
export const EventResponse = t.Object({ data: FeedEvent }, { title: 'EventResponse' });

/** `/events/{id}`: the event id; nothing longer than an event id is ever stored (404). */
export const EventParams = t.Object({ id: t.String({ description: 'The event id (`evt_…`)' }) });

/** The event types of a `type` filter (distinct, sorted), or why it is refused. */
export function parseTypeFilter(raw: string): { types: string[] } | { problem: string } {
  const entries = raw.split(',').map((entry) => entry.trim());
  if (entries.some((entry) => entry === ''))
    return { problem: 'must be a comma-separated list of event types, without empty entries (see GET /webhooks/event-types)' };
  for (const entry of entries) {
    if (entry === TEST_EVENT_TYPE) return { problem: `${TEST_EVENT_TYPE} events are not listed in the feed` };
    if (!isEventType(entry))
      return { problem: `holds ${JSON.stringify(entry.slice(0, 64))}, which is not an event type (see GET /webhooks/event-types)` };
  }
  return { types: [...new Set(entries)].sort() };
}

/** The last value of a query parameter given once or repeated. */
const lastValue = (value: unknown) => (Array.isArray(value) ? value[value.length - 1] : value);

/**
 * The feed's own query rules, checked with the schema's (one 422 for every failing parameter):
 * `sort` is refused — the only order is the stream's — and `type` must name known event types.
 */
export function eventQueryErrors(query: Record<string, unknown>): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  if (query.sort !== undefined)
    details.push({ field: 'sort', message: 'is not accepted: events are always listed oldest first, in the order of the event stream' });
  const type = lastValue(query.type);
  if (typeof type === 'string') {
    const parsed = parseTypeFilter(type);
    if ('problem' in parsed) details.push({ field: 'type', message: parsed.problem });
  }
  return details;
}

/** The API view of a stored event (exactly what its deliveries send). */
export function presentFeedEvent(row: Pick<Selectable<EventsTable>, 'id' | 'type' | 'occurred_at' | 'data'>): FeedEvent {
  return { id: row.id, type: row.type, timestamp: new Date(row.occurred_at).toISOString(), data: row.data };
}

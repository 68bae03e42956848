import { listPagination, listRequest } from '@crm/db';
import { checkedQuery, notFound, requestContext, throwIfInvalid } from '@crm/http';
import { Elysia } from 'elysia';
import type { Kysely } from 'kysely';
import type { WebhooksDatabase } from '../db/database.ts';
import {
  EventListQuery,
  EventListResponse,
  EventParams,
  EventResponse,
  eventQueryErrors,
  parseTypeFilter,
  presentFeedEvent,
} from './model.ts';
import { findFeedEvent, listFeedEvents } from './repo.ts';
import type { Watermark } from './watermark.ts';

const tags = ['Events'];

/** The feed's only order: the stream sequence, presented as the walked relation's `id` (see repo.ts). */
const SORT_TYPES = { id: 'bigint' } as const;

/** The longest event id stored (the events table's CHECK agrees): anything longer is simply not found. */
const MAX_EVENT_ID = 255;

export interface EventsRoutesDeps {
  db: Kysely<WebhooksDatabase>;
  watermark: Watermark;
  retentionDays: number;
}

const later = (a: string | undefined, b: string | undefined): Date | undefined => {
  const times = [a, b].filter((v): v is string => v !== undefined).map((v) => new Date(v));
  return times.length === 0 ? undefined : new Date(Math.max(...times.map((d) => d.getTime())));
};

/** The events feed (contract §25): the account's events in stream order, and one event by id. */
export function eventsRoutes(deps: EventsRoutesDeps) {
  const listDescription = [
    `The account's events, oldest first in the order of the event stream (JetStream sequence): the same \`id\`, \`type\`, \`timestamp\` and \`data\` as the bodies of the webhook deliveries. \`webhook.test\` events are not listed.`,
    'Watermark: an event is listed only once every event before it in the stream is stored, so a cursor walk never skips one that arrives late; an event is listed within about a second of the answer to the write that made it.',
    `Events are kept ${deps.retentionDays} days after their \`timestamp\` (longer only while a webhook delivery of theirs is still pending), then purged.`,
    'Filters: `type` (comma-separated event types; an unknown one → 422 on `type`), `created_since` (RFC 3339; `updated_since` means the same). `sort` is not accepted (422): the stream order is the only one.',
    'Page mode (`page`, `per_page`) counts: `total`, `current_page`, `last_page`. Cursor mode: send `pagination.next_cursor` as `cursor` (with the same filters, never with `page`) to continue after the last event without counting — counts are null there; at the end of the feed `has_more` is false and `next_cursor` null: to poll for new events, repeat the request that returned the last page (same cursor), which answers that page again followed by what arrived since (events are immutable: skip ids already seen). A cursor made for other filters, or a malformed one, is 422 on `cursor`.',
    'The `Link` header (RFC 8288) has first/prev/next/last page URLs in page mode, and next (with the cursor) in cursor mode.',
  ].join(' ');

  return new Elysia({ name: 'webhooks-feed' })
    .use(requestContext)
    .get(
      '/v1/events',
      async ({ query, tenantId }) => {
        // Bounds, formats, `sort` and `type` were checked (one 422) by the query rules.
        const parsed = query.type === undefined ? undefined : parseTypeFilter(query.type);
        const types = parsed && 'types' in parsed ? parsed.types : undefined;
        const { request, errors } = listRequest(query, SORT_TYPES, { type: types?.join(','), created_since: query.created_since });
        throwIfInvalid(errors);
        const since = later(query.created_since, query.updated_since);
        const watermark = await deps.watermark.current();
        const { page, rows } = await listFeedEvents(deps.db, tenantId, watermark, { types, since }, request);
        return { data: rows.map(presentFeedEvent), pagination: listPagination(page, request) };
      },
      {
        ...checkedQuery(EventListQuery, eventQueryErrors),
        response: { 200: EventListResponse },
        detail: { summary: "List the account's events (the events feed)", tags, description: listDescription },
      },
    )
    .get(
      '/v1/events/:id',
      async ({ params, tenantId }) => {
        const row = params.id.length <= MAX_EVENT_ID ? await findFeedEvent(deps.db, tenantId, params.id) : undefined;
        if (!row) throw notFound('Event');
        return { data: presentFeedEvent(row) };
      },
      {
        params: EventParams,
        response: { 200: EventResponse },
        detail: {
          summary: 'Get one event',
          tags,
          description:
            "One event of the account by its id, as the feed lists it (it may be readable here a moment before the watermark lets the feed list it). Another account's event, a `webhook.test` event and a purged one are 404. Events never change: the `ETag` stays the same, and `If-None-Match` with it → 304.",
        },
      },
    );
}

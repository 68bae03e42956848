import { IdParams, ListPagination, listQueryWith, PathId } from '@crm/http';
import { t } from 'elysia';
import type { Selectable } from 'kysely';
import type { DeliveryAttemptsTable } from '../db/database.ts';

export const Delivery = t.Object(
  {
    id: t.Integer(),
    event_id: t.String({ description: 'Also the `webhook-id` header of every attempt' }),
    event_type: t.String(),
    attempt: t.Integer({ description: 'Attempt number for this event and endpoint, from 1' }),
    status: t.Union([t.Literal('pending'), t.Literal('delivered'), t.Literal('failed')], {
      description:
        '`delivered`: this attempt got a 2xx. `pending`: not made yet, or failed with another attempt due at `next_attempt_at`. `failed`: failed and no attempt follows.',
    }),
    status_code: t.Union([t.Integer(), t.Null()], { description: 'null on a network error or timeout, and before the attempt' }),
    error: t.Union([t.String(), t.Null()]),
    response_excerpt: t.Union([t.String(), t.Null()], { description: 'At most the first 2 KB of the answer' }),
    duration_ms: t.Union([t.Integer(), t.Null()]),
    created_at: t.String({ format: 'date-time' }),
    next_attempt_at: t.Union([t.String({ format: 'date-time' }), t.Null()]),
  },
  {
    title: 'Delivery',
    description: 'One delivery attempt of one event to one endpoint',
    examples: [
      {
        id: 1,
        event_id: 'evt_5f0c6a3e2b1d4c8e9a7f6b5c4d3e2f1a',
        event_type: 'contact.created',
        attempt: 1,
        status: 'delivered',
        status_code: 200,
        error: null,
        response_excerpt: 'ok',
        duration_ms: 84,
        created_at: '2026-11-20T09:30:01.000Z',
        next_attempt_at: null,
      },
    ],
  },
);
export type Delivery = typeof Delivery.static;

export const DeliveryListQuery = listQueryWith({
  event_id: t.Optional(t.String({ minLength: 1, maxLength: 255, description: 'Only attempts for this event (`evt_…`)' })),
  status: t.Optional(t.Union([t.Literal('pending'), t.Literal('delivered'), t.Literal('failed')])),
});

/** `/webhooks/{id}/deliveries/{delivery_id}`: both numeric ids; outside 1..2147483647 → 404. */
export const DeliveryParams = t.Object({ id: PathId('Webhook id'), delivery_id: PathId('Delivery (attempt) id') });

export const DeliveryResponse = t.Object({ data: Delivery }, { title: 'DeliveryResponse' });
export const DeliveryListResponse = t.Object({ data: t.Array(Delivery), pagination: ListPagination }, { title: 'DeliveryListResponse' });

/** `/webhooks/{id}/deliveries`: the webhook's id; outside 1..2147483647 → 404. */
export const WebhookDeliveriesParams = IdParams;

/** The API view of an attempt row. */
export function presentDelivery(row: Selectable<DeliveryAttemptsTable>): Delivery {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type,
    attempt: row.attempt,
    status: row.status,
    status_code: row.status_code,
    error: row.error,
    response_excerpt: row.response_excerpt,
    duration_ms: row.duration_ms,
    created_at: row.created_at.toISOString(),
    next_attempt_at: row.next_attempt_at?.toISOString() ?? null,
  };
}

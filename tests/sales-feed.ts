// How the sales and orders tests observe events: as a consumer does, through the events feed
// (contract §25: the account's events in stream order, each listed once it was published and
// consumed), never through the outbox table.
import { pollUntil, type TestTenant } from '@crm/testing';

export interface FeedEvent {
  id: string;
  type: string;
  timestamp: string;
  data: any;
}

const MARKER = 'feed marker ';

/** Whether a contact (or an event's data) is a marker written by `settledEvents`. */
export const isMarker = (contact: { name?: unknown } | null | undefined): boolean =>
  typeof contact?.name === 'string' && contact.name.startsWith(MARKER);

/** Every event the feed lists for the tenant now, oldest first. */
export async function listedEvents(tenant: TestTenant): Promise<FeedEvent[]> {
  const events: FeedEvent[] = [];
  for (let page = 1; ; page++) {
    const res = await tenant.request('GET', `/v1/events?per_page=100&page=${page}`);
    if (res.status !== 200) throw new Error(`GET /v1/events → ${res.status} ${res.text}`);
    events.push(...res.body.data);
    if (!res.body.pagination.has_more) return events;
  }
}

/** The feed once `done` holds, polled every 50 ms for up to `timeoutMs`. */
export function eventsWhen(tenant: TestTenant, done: (events: FeedEvent[]) => boolean, timeoutMs = 10_000): Promise<FeedEvent[]> {
  return pollUntil('the feed to get there', () => listedEvents(tenant), done, {
    timeoutMs,
    everyMs: 50,
    show: (events) => events.map((e) => e.type),
  });
}

/**
 * The events of every write answered before this call, as the feed lists them (markers left
 * out). Absence needs a positive control: a marker contact (`feed marker <uuid>`) is created and
 * the feed read until it lists the marker's `contact.created`. The sales relay publishes the
 * outbox in insert order and the feed lists in stream order behind a watermark, so by then an
 * event of an earlier write is listed too; only when both land in one relay batch (published
 * concurrently) could one trail the marker — a missed failure, never a false one. The marker is
 * a contact of the tenant: lists of contacts should leave it out (`isMarker`).
 */
export async function settledEvents(tenant: TestTenant): Promise<FeedEvent[]> {
  const name = `${MARKER}${crypto.randomUUID()}`;
  const res = await tenant.request('POST', '/v1/contacts', { body: { name, type: 'client' } });
  if (res.status !== 201) throw new Error(`marker contact → ${res.status} ${res.text}`);
  const events = await eventsWhen(tenant, (all) => all.some((e) => e.type === 'contact.created' && e.data.name === name));
  const upToMarker = events.slice(
    0,
    events.findIndex((e) => e.type === 'contact.created' && e.data.name === name),
  );
  return upToMarker.filter((e) => !(e.type === 'contact.created' && isMarker(e.data)));
}

/** The settled events whose type starts with `prefix` (`order.`, `opportunity.`). */
export async function settledEventsOf(tenant: TestTenant, prefix: string): Promise<FeedEvent[]> {
  return (await settledEvents(tenant)).filter((e) => e.type.startsWith(prefix));
}

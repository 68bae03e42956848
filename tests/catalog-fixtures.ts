import { pollUntil, type TestTenant } from '@crm/testing';

/** A valid product body in category `tools` with one rate (`<reference>-A`); `extra` overrides fields. */
export const product = (reference: string, extra: Record<string, unknown> = {}) => ({
  reference,
  name: `Product ${reference}`,
  vat: 21,
  product_category_ref: 'tools',
  rates: [{ sku: `${reference}-A`, cost: 1, price: 2 }],
  ...extra,
});

/** Creates a product through the gateway and returns it, failing loudly on anything but 201. */
export async function create(tenant: TestTenant, body: Record<string, unknown>) {
  const res = await tenant.request('POST', '/v1/products', { body });
  if (res.status !== 201) throw new Error(`product creation failed: ${res.status} ${res.text}`);
  return res.body.data;
}

/** An event as the events feed lists it (contract §25): what a webhook receiver gets too. */
export interface FeedEvent {
  id: string;
  type: string;
  timestamp: string;
  data: any;
}

/** Events of the account's mark (see settledFeed), left out of what the helpers return. */
const MARK_PREFIX = 'feed-mark-';
const isMark = (event: FeedEvent) => typeof event.data?.reference === 'string' && event.data.reference.startsWith(MARK_PREFIX);

/** The tenant's events as the feed lists them now (every page, oldest first), marks left out. */
export async function feed(tenant: TestTenant): Promise<FeedEvent[]> {
  const events: FeedEvent[] = [];
  for (let page = 1; ; page++) {
    const res = await tenant.request('GET', `/v1/events?per_page=100&page=${page}`);
    if (res.status !== 200) throw new Error(`GET /v1/events → ${res.status} ${res.text}`);
    events.push(...res.body.data);
    if (!res.body.pagination.has_more) return events.filter((event) => !isMark(event));
  }
}

/**
 * Every catalog event of the tenant written so far, complete — so a test can also see that a
 * refused write added none. A mark (a root category created and deleted again, which leaves
 * every list and resource as it was) is written after them, and the feed is read once the
 * mark's deletion is listed: the catalog relays its outbox in order and the feed lists an event
 * only after every earlier one of the stream, so nothing written before the mark can be missing.
 */
export async function settledFeed(tenant: TestTenant): Promise<FeedEvent[]> {
  const reference = `${MARK_PREFIX}${crypto.randomUUID()}`;
  const mark = await tenant.request('POST', '/v1/product-categories', { body: { name: 'Feed mark', reference } });
  if (mark.status !== 201) throw new Error(`mark creation failed: ${mark.status} ${mark.text}`);
  const gone = await tenant.request('DELETE', `/v1/product-categories/${mark.body.data.id}`);
  if (gone.status !== 200) throw new Error(`mark deletion failed: ${gone.status} ${gone.text}`);
  const since = encodeURIComponent(mark.body.data.created_at);
  await pollUntil(
    'the feed to list the mark',
    async () => (await tenant.request('GET', `/v1/events?per_page=100&type=product_category.deleted&created_since=${since}`)).body,
    (body) => body.data?.some((event: FeedEvent) => event.data.reference === reference),
    { everyMs: 50 },
  );
  return feed(tenant);
}

/** The events of these types (`product.`, `product_category.created`…: a prefix matches), in feed order. */
export const ofType = (events: FeedEvent[], prefix: string) => events.filter((event) => event.type.startsWith(prefix));

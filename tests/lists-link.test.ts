// Every list of the API, held to one yardstick (contract §4, §22): seeded with a few rows, a list
// walked in page mode and walked with cursors gives the same items; page mode counts and links
// first/prev/next/last, cursor pages count nothing and link only the next page while there is
// more; `next_cursor` is a string exactly while `has_more`. Through the gateway, for every list.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type ApiResponse, type Receiver, type Stack, sharedStack, startReceiver, type TestTenant } from '@crm/testing';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const USERS = Array.from({ length: 5 }, (_, i) => ({ email: `user${i}@lists.test`, name: `User ${i}` }));

let stack: Stack;
let tenant: TestTenant;
let receiver: Receiver;
/** Path parameters of the nested lists, learned while seeding. */
const seeded = { contactId: 0, opportunityId: 0, webhookId: 0 };

async function created(path: string, body: unknown): Promise<any> {
  const res = await tenant.request('POST', path, { body });
  if (res.status !== 201) throw new Error(`POST ${path} → ${res.status} ${res.text}`);
  return res.body.data;
}

async function upload(path: string, name: string): Promise<void> {
  const form = new FormData();
  form.set('file', new File([`notes of ${name}`], `${name}.txt`, { type: 'text/plain' }));
  const res = await tenant.request('POST', path, { raw: form });
  if (res.status !== 201) throw new Error(`POST ${path} → ${res.status} ${res.text}`);
}

beforeAll(async () => {
  stack = await sharedStack();
  receiver = await startReceiver();
  tenant = await stack.createTenant({ users: USERS });
  // The endpoint that receives everything comes first, so every later write makes a delivery.
  const hook = await created('/v1/webhooks', { url: `${receiver.url}/all`, events: ['*'] });
  receiver.trust(hook.secret);
  seeded.webhookId = hook.id;
  for (let i = 0; i < 3; i++) await created('/v1/webhooks', { url: `${receiver.url}/quiet-${i}`, events: ['order.deleted'] });
  const contacts = [];
  for (let i = 0; i < 4; i++) contacts.push(await created('/v1/contacts', { name: `Lists contact ${i}`, type: 'client' }));
  seeded.contactId = contacts[0].id;
  for (let i = 0; i < 3; i++)
    seeded.opportunityId = (await created('/v1/opportunities', { name: `Deal ${i}`, enterprise_identifier: String(seeded.contactId) })).id;
  await created('/v1/product-categories', { name: 'Tools', reference: 'tools' });
  for (let i = 0; i < 2; i++) await created('/v1/product-categories', { name: `Category ${i}`, reference: `cat-${i}` });
  for (let i = 0; i < 3; i++)
    await created('/v1/products', {
      reference: `P-${i}`,
      name: `Product ${i}`,
      vat: 21,
      product_category_ref: 'tools',
      rates: [{ sku: `P-${i}-A`, cost: 1, price: 2 }],
    });
  for (let i = 0; i < 3; i++)
    await created('/v1/orders', {
      enterprise_identifier: 'Lists contact 1',
      user_email: USERS[0]?.email,
      date_limit: '2026-12-31',
      state: 1,
    });
  for (let i = 0; i < 3; i++) await upload(`/v1/contacts/${seeded.contactId}/documents`, `contact-doc-${i}`);
  for (let i = 0; i < 3; i++) await upload(`/v1/opportunities/${seeded.opportunityId}/documents`, `deal-doc-${i}`);
  // Document categories have no create route (General is made on first upload; the others by an operator).
  await stack.sql(
    `insert into documents.document_categories (tenant_id, name) select $1, 'Operator category ' || g from generate_series(1, 3) g`,
    [tenant.tenantId],
  );
}, 180_000);

afterAll(async () => {
  await receiver?.close();
});

/** Every list: its path (with this tenant's ids) and the filters it is read with. */
const LISTS: { name: string; path: () => string; query?: string }[] = [
  { name: 'contacts', path: () => '/v1/contacts' },
  { name: 'opportunities', path: () => '/v1/opportunities' },
  { name: 'orders', path: () => '/v1/orders' },
  { name: 'products', path: () => '/v1/products' },
  { name: 'product categories', path: () => '/v1/product-categories' },
  { name: 'documents', path: () => '/v1/documents' },
  { name: 'documents of a contact', path: () => `/v1/contacts/${seeded.contactId}/documents` },
  { name: 'documents of an opportunity', path: () => `/v1/opportunities/${seeded.opportunityId}/documents` },
  { name: 'document categories', path: () => '/v1/document-categories' },
  { name: 'users', path: () => '/v1/users' },
  { name: 'webhook endpoints', path: () => '/v1/webhooks' },
  { name: 'deliveries', path: () => `/v1/webhooks/${seeded.webhookId}/deliveries` },
  // The walk itself only reads: its own GETs are audited, POSTs are not.
  { name: 'audit logs', path: () => '/v1/audit-logs', query: 'method=POST' },
  { name: 'events', path: () => '/v1/events' },
];

interface Link {
  rel: string;
  url: string;
}

/** The Link header's entries (RFC 8288), in order. */
function linksOf(res: ApiResponse): Link[] {
  const header = res.headers.get('link') ?? '';
  return [...header.matchAll(/<([^>]*)>\s*;\s*rel="([^"]+)"/g)].map((m) => ({ url: m[1] as string, rel: m[2] as string }));
}

const paramsOf = (url: string) => new URL(url, 'http://gateway.test').searchParams;

async function get(url: string): Promise<ApiResponse> {
  const res = await tenant.request('GET', url);
  expect(res.status, `GET ${url}: ${res.text.slice(0, 300)}`).toBe(200);
  return res;
}

/** Waits until a list stops growing (deliveries, events and audit records arrive after the writes). */
async function settledTotal(base: string): Promise<number> {
  let last = -1;
  for (let i = 0; i < 40; i++) {
    const res = await get(`${base}${base.includes('?') ? '&' : '?'}per_page=1`);
    const total = res.body.pagination.total;
    if (total === last && total >= 3) return total;
    last = total;
    await sleep(750);
  }
  throw new Error(`${base} did not settle at 3 items or more (last total ${last})`);
}

const idsOf = (res: ApiResponse) => res.body.data.map((item: any) => item.id);

describe('every list: page mode, cursor mode and Link headers agree (contract §22)', () => {
  for (const list of LISTS) {
    test(list.name, async () => {
      const path = list.path();
      const base = list.query ? `${path}?${list.query}` : path;
      const total = await settledTotal(base);
      // At least three pages: 2 × perPage < total.
      const perPage = Math.max(1, Math.floor((total - 1) / 2));
      const lastPage = Math.ceil(total / perPage);
      expect(lastPage).toBeGreaterThanOrEqual(3);
      const pageUrl = (page: number) => `${path}?${list.query ? `${list.query}&` : ''}per_page=${perPage}&page=${page}`;

      // Page mode: counted, next_cursor while there is more, first/prev/next/last.
      const byPages: unknown[] = [];
      let firstPage: ApiResponse | undefined;
      for (let page = 1; page <= lastPage; page++) {
        const res = await get(pageUrl(page));
        firstPage ??= res;
        byPages.push(...idsOf(res));
        const { pagination } = res.body;
        expect(pagination).toMatchObject({ total, per_page: perPage, current_page: page, last_page: lastPage, has_more: page < lastPage });
        if (page < lastPage) expect(pagination.next_cursor).toEqual(expect.any(String));
        else expect(pagination.next_cursor).toBeNull();
        const links = linksOf(res);
        expect(links.map((l) => l.rel)).toEqual(['first', ...(page > 1 ? ['prev'] : []), ...(page < lastPage ? ['next'] : []), 'last']);
        const pageOf = (rel: string) => paramsOf(links.find((l) => l.rel === rel)?.url ?? '').get('page');
        expect(pageOf('first')).toBe('1');
        expect(pageOf('last')).toBe(String(lastPage));
        if (page > 1) expect(pageOf('prev')).toBe(String(page - 1));
        if (page < lastPage) expect(pageOf('next')).toBe(String(page + 1));
        for (const link of links) {
          // Relative to the host, the same list, the same per_page and filters, never a cursor.
          expect(link.url.startsWith(`${path}?`)).toBe(true);
          expect(paramsOf(link.url).get('per_page')).toBe(String(perPage));
          for (const [name, value] of new URLSearchParams(list.query ?? '')) expect(paramsOf(link.url).get(name)).toBe(value);
          expect(paramsOf(link.url).has('cursor')).toBe(false);
        }
      }
      expect(byPages).toHaveLength(total);
      expect(new Set(byPages.map(String)).size).toBe(total);
      const past = await get(pageUrl(lastPage + 1));
      expect(past.body.data).toEqual([]);
      expect(past.body.pagination).toMatchObject({ total, current_page: lastPage + 1, has_more: false, next_cursor: null });

      // Cursor mode from the first page's next_cursor, following each Link rel="next".
      const byCursor: unknown[] = [...idsOf(firstPage as ApiResponse)];
      let next: string | undefined = `${path}?${list.query ? `${list.query}&` : ''}per_page=${perPage}&cursor=${encodeURIComponent(
        (firstPage as ApiResponse).body.pagination.next_cursor,
      )}`;
      for (let pages = 0; next; pages++) {
        if (pages > lastPage) throw new Error('the cursor walk does not end');
        const res = await get(next);
        byCursor.push(...idsOf(res));
        const { pagination } = res.body;
        expect(pagination).toMatchObject({ total: null, current_page: null, last_page: null, per_page: perPage });
        expect(pagination.next_cursor === null).toBe(!pagination.has_more);
        const links = linksOf(res);
        expect(links.map((l) => l.rel)).toEqual(pagination.has_more ? ['next'] : []);
        next = links[0]?.url;
        if (next) {
          expect(next.startsWith(`${path}?`)).toBe(true);
          expect(paramsOf(next).get('cursor')).toBe(pagination.next_cursor);
          expect(paramsOf(next).get('per_page')).toBe(String(perPage));
          expect(paramsOf(next).has('page')).toBe(false);
        }
      }
      expect(byCursor).toEqual(byPages);
    }, 90_000);
  }
});

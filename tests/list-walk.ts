// What the sync tests share to walk a list the way an integration does (contract §22).
import { expect } from 'bun:test';
import type { TestTenant } from '@crm/testing';

/** An answer as `tenant.request` gives it. */
export type Answer = { status: number; text: string; body: any; headers: Headers };

/** The body of an answer with the expected status (throws with the answer otherwise). */
export function ok(res: Answer, status = 200): any {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status} ${res.text}`);
  return res.body;
}

/** The Link header of an answer as rel → URL. */
export function links(res: Answer): Record<string, string> {
  const header = res.headers.get('link');
  if (!header) return {};
  return Object.fromEntries(
    header.split(', ').map((part) => {
      const match = /^<([^>]+)>; rel="(\w+)"$/.exec(part);
      if (!match) throw new Error(`malformed Link part: ${part}`);
      return [match[2], match[1]];
    }),
  );
}

/** The query parameters of a (host-relative) URL. */
export const params = (url: string) => Object.fromEntries(new URL(url, 'http://host').searchParams);

/**
 * Walks a list: the first page in page mode, then its next_cursor, then each cursor page's
 * Link rel="next", running `between` before every next page. Returns the keys seen, in order.
 */
export async function walk<K>(tenant: TestTenant, path: string, key: (item: any) => K, between: (step: number) => Promise<void>) {
  const seen: K[] = [];
  let res: Answer = await tenant.request('GET', path);
  for (let step = 0; ; step++) {
    const body = ok(res);
    seen.push(...body.data.map(key));
    const { has_more, next_cursor } = body.pagination;
    expect(next_cursor !== null).toBe(has_more);
    if (step > 0) {
      expect(body.pagination).toMatchObject({ total: null, current_page: null, last_page: null });
      if (has_more) expect(params(links(res).next as string).cursor).toBe(next_cursor);
      else expect(res.headers.get('link')).toBeNull();
    }
    if (!has_more) return seen;
    if (step > 80) throw new Error('the walk does not end');
    await between(step);
    res = await tenant.request('GET', step === 0 ? `${path}&cursor=${encodeURIComponent(next_cursor)}` : (links(res).next as string));
  }
}

/** Every stable key once, none twice, and the stable keys in the order of the finished list. */
export function expectExactWalk<K>(seen: K[], stable: K[], finalOrder: K[]) {
  expect(seen.length).toBe(new Set(seen).size);
  const stableSet = new Set(stable);
  const seenStable = seen.filter((k) => stableSet.has(k));
  expect(new Set(seenStable)).toEqual(stableSet);
  expect(seenStable).toEqual(finalOrder.filter((k) => stableSet.has(k)));
}

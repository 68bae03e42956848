import { describe, expect, test } from 'bun:test';
import { decodeCursor, encodeCursor, listDigest } from './cursor.ts';
import { pageWindow } from './read-page.ts';
import { listPagination, listRequest } from './request.ts';

const SORTABLE = { id: 'integer', name: 'text', updated_at: 'timestamptz' } as const;

describe('cursors', () => {
  test('round trip, bound to the sort and filters they were made for', () => {
    const digest = listDigest('name', { type: 'client' });
    const cursor = encodeCursor(digest, { key: '2026-11-23 10:00:00.123456+00', id: 42 });
    expect(decodeCursor(cursor, digest)).toEqual({ key: '2026-11-23 10:00:00.123456+00', id: 42 });
    expect(decodeCursor(cursor, listDigest('-name', { type: 'client' }))).toHaveProperty('problem');
    expect(decodeCursor(cursor, listDigest('name', { type: 'lead' }))).toHaveProperty('problem');
    expect(listDigest('name', { a: '1', b: undefined, c: '2' })).toBe(listDigest('name', { c: '2', a: '1' }));
  });
  test('malformed cursors are problems, never exceptions', () => {
    const digest = listDigest('id', {});
    for (const raw of ['', '!!!', 'e30', Buffer.from('{"v":1,"q":"x","k":"1","i":-1}').toString('base64url'), 'a'.repeat(3000)])
      expect(decodeCursor(raw, digest)).toHaveProperty('problem');
  });
});

describe('listRequest', () => {
  test('page mode by default, cursor mode with a cursor, never both', () => {
    const page = listRequest({ per_page: 10, page: 3, sort: '-name' }, SORTABLE);
    expect(page.errors).toEqual([]);
    expect(page.request.window).toMatchObject({ perPage: 10, page: 3, sortField: 'name', sortType: 'text', descending: true });
    const digest = listRequest({ sort: 'name' }, SORTABLE, { q: 'x' }).request.digest;
    const cursor = encodeCursor(digest, { key: 'Acme', id: 7 });
    const next = listRequest({ sort: 'name', cursor }, SORTABLE, { q: 'x' });
    expect(next.errors).toEqual([]);
    expect(next.request.window).toMatchObject({ after: { key: 'Acme', id: 7 } });
    expect(next.request.window.page).toBeUndefined();
    expect(listRequest({ sort: 'name', cursor, page: 2 }, SORTABLE, { q: 'x' }).errors.map((e) => e.field)).toEqual(['cursor']);
    expect(listRequest({ sort: 'id', cursor }, SORTABLE, { q: 'x' }).errors.map((e) => e.field)).toEqual(['cursor']);
    expect(listRequest({ sort: 'email' }, SORTABLE).errors.map((e) => e.field)).toEqual(['sort']);
  });
});

describe('pagination objects', () => {
  test('page mode counts; cursor mode does not; next_cursor only when there is more', () => {
    const { request } = listRequest({ per_page: 15, page: 1 }, SORTABLE);
    expect(listPagination({ ids: [1], total: 31, hasMore: true, last: { key: '15', id: 15 } }, request)).toMatchObject({
      total: 31,
      current_page: 1,
      last_page: 3,
      has_more: true,
      next_cursor: expect.any(String),
    });
    const cursorRequest = listRequest({ cursor: encodeCursor(request.digest, { key: '15', id: 15 }) }, SORTABLE).request;
    expect(listPagination({ ids: [16], total: null, hasMore: false, last: { key: '16', id: 16 } }, cursorRequest)).toEqual({
      total: null,
      per_page: 15,
      current_page: null,
      last_page: null,
      has_more: false,
      next_cursor: null,
    });
  });
  test('pages in the second half are read from the other end', () => {
    expect(pageWindow(100, 0, 15)).toEqual({ any: true, offset: 0, limit: 15, reversed: false });
    expect(pageWindow(100, 90, 15)).toEqual({ any: true, offset: 0, limit: 10, reversed: true });
    expect(pageWindow(100, 105, 15).any).toBe(false);
  });
});

import { describe, expect, test } from 'bun:test';
import { Elysia } from 'elysia';
import { listQuery } from './input/query.ts';
import { ListQuery, linkHeader } from './lists.ts';

describe('ListQuery', () => {
  test('no page is filled in: a request with only a cursor reaches the handler without page', async () => {
    const app = new Elysia().get('/items', ({ query }) => ({ page: query.page ?? null, cursor: query.cursor ?? null }), {
      ...listQuery(ListQuery, ['id']),
    });
    const res = await app.handle(new Request('http://localhost/items?cursor=abc'));
    expect(await res.json()).toEqual({ page: null, cursor: 'abc' });
    const paged = await app.handle(new Request('http://localhost/items?page=2'));
    expect(await paged.json()).toEqual({ page: 2, cursor: null });
  });
});

describe('linkHeader', () => {
  test('cursor mode links next with the cursor and the other parameters; nothing at the end', () => {
    const url = new URL('http://localhost/v1/items?per_page=2&sort=name&cursor=old');
    expect(linkHeader(url, { current_page: null, last_page: null, has_more: true, next_cursor: 'new' })).toBe(
      '</v1/items?per_page=2&sort=name&cursor=new>; rel="next"',
    );
    expect(linkHeader(url, { current_page: null, last_page: null, has_more: false, next_cursor: null })).toBe('');
  });
});

import { expect, test } from 'bun:test';
import { linksOf } from './request.ts';

test('Link headers by relation', () => {
  expect(
    linksOf(
      '</v1/contacts?per_page=15&page=1>; rel="first", </v1/contacts?per_page=15&page=3>; rel="next", </v1/contacts?per_page=15&page=9>; rel=last',
    ),
  ).toEqual({ first: '/v1/contacts?per_page=15&page=1', next: '/v1/contacts?per_page=15&page=3', last: '/v1/contacts?per_page=15&page=9' });
  expect(linksOf('</v1/orders?cursor=abc%3D>; rel="next"; title="more"')).toEqual({ next: '/v1/orders?cursor=abc%3D' });
  expect(linksOf('<https://x.test/a>; rel="prev first"')).toEqual({ prev: 'https://x.test/a', first: 'https://x.test/a' });
  expect(linksOf(null)).toEqual({});
});

import { describe, expect, test } from 'bun:test';
import { pageRequest, paginationOf } from './pagination.ts';

describe('paginationOf', () => {
  test('middle, last, past-the-end and empty pages', () => {
    expect(paginationOf(31, 15, 1)).toEqual({ total: 31, per_page: 15, current_page: 1, last_page: 3, has_more: true });
    expect(paginationOf(31, 15, 3)).toEqual({ total: 31, per_page: 15, current_page: 3, last_page: 3, has_more: false });
    expect(paginationOf(31, 15, 9)).toEqual({ total: 31, per_page: 15, current_page: 9, last_page: 3, has_more: false });
    expect(paginationOf(0, 15, 1)).toEqual({ total: 0, per_page: 15, current_page: 1, last_page: 1, has_more: false });
  });
});

describe('pageRequest', () => {
  test('defaults, descending sort and offsets', () => {
    expect(pageRequest({}, ['id']).request).toMatchObject({ perPage: 15, page: 1, offset: 0, sortField: 'id', descending: false });
    expect(pageRequest({ per_page: 10, page: 3, sort: '-created_at' }, ['id', 'created_at']).request).toMatchObject({
      offset: 20,
      sortField: 'created_at',
      descending: true,
    });
  });
  test('an unknown sort field and a bad timestamp are field errors', () => {
    const { errors } = pageRequest({ sort: 'password', updated_since: 'yesterday' }, ['id']);
    expect(errors.map((e) => e.field)).toEqual(['sort', 'updated_since']);
  });
  test('per_page outside 1..100 and page below 1 are named', () => {
    expect(pageRequest({ per_page: 0, page: 0 }, ['id']).errors.map((e) => e.field)).toEqual(['per_page', 'page']);
    expect(pageRequest({ per_page: 101 }, ['id']).errors).toEqual([{ field: 'per_page', message: 'must be between 1 and 100' }]);
  });
});

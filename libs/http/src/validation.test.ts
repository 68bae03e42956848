import { describe, expect, test } from 'bun:test';
import { Type } from '@sinclair/typebox';
import { t } from 'elysia';
import type { AppError } from './errors.ts';
import { inspectJson, readJsonBody } from './input/json-body.ts';
import { queryErrors, sortErrors } from './input/query.ts';
import { DateOnly, ExtraFields, Id, Money, Percentage, Quantity, Timestamp } from './input/schemas.ts';
import { schemaErrors } from './input/validate.ts';
import { fieldPath } from './validation.ts';

describe('fieldPath', () => {
  test('JSON pointers become the contract paths', () => {
    expect(fieldPath('/rates/0/price')).toBe('rates[0].price');
    expect(fieldPath('/location/city')).toBe('location.city');
    expect(fieldPath('')).toBe('body');
  });
});

describe('schemaErrors: one detail per field, worded by the rule that failed', () => {
  const Line = Type.Object({ price: Money(), quantity: Quantity(), discount: Percentage() }, { additionalProperties: false });
  const Body = Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 255 }),
      email: Type.Optional(Type.Union([Type.String({ format: 'email' }), Type.Null()])),
      phone: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      opportunity_id: Type.Optional(Id()),
      close_date: Type.Optional(DateOnly()),
      status: Type.Optional(Type.Union([Type.Literal('open'), Type.Literal('won')])),
      extra_fields: Type.Optional(ExtraFields()),
      location: Type.Optional(Type.Object({ city: Type.String() }, { additionalProperties: false })),
      products: Type.Optional(Type.Array(Line)),
    },
    { additionalProperties: false },
  );

  test('required, unknown at any depth, bounds, formats, enums, nullable members', () => {
    const details = schemaErrors(Body, {
      bogus: 1,
      email: 'not-an-email',
      phone: 3,
      opportunity_id: 2_147_483_648,
      close_date: '2026-02-30',
      status: 'maybe',
      extra_fields: { big: 'x'.repeat(17_000) },
      location: { city: 'Paris', planet: 'Earth' },
      products: [
        { price: -1, quantity: 0, discount: 101 },
        { price: 1, quantity: 1_000_000_001, discount: 0, colour: 'red' },
      ],
    });
    expect(details).toEqual([
      { field: 'name', message: 'is required' },
      { field: 'bogus', message: 'is not a known field' },
      { field: 'email', message: 'must be a valid e-mail address' },
      { field: 'phone', message: 'must be a string or null' },
      { field: 'opportunity_id', message: 'must be at most 2147483647' },
      { field: 'close_date', message: 'must be a calendar date YYYY-MM-DD between 0001-01-01 and 9999-12-31' },
      { field: 'status', message: 'must be one of open, won' },
      { field: 'extra_fields', message: 'must be an object whose JSON is at most 16 KB' },
      { field: 'location.planet', message: 'is not a known field' },
      { field: 'products[0].price', message: 'must be at least 0' },
      { field: 'products[0].quantity', message: 'must be greater than 0' },
      { field: 'products[0].discount', message: 'must be at most 100' },
      { field: 'products[1].colour', message: 'is not a known field' },
      { field: 'products[1].quantity', message: 'must be at most 1000000000' },
    ]);
  });

  test('a valid body has no errors; non-finite numbers are refused', () => {
    expect(schemaErrors(Body, { name: 'Acme', close_date: '2024-02-29', products: [{ price: 1.5, quantity: 2, discount: 0 }] })).toEqual(
      [],
    );
    expect(schemaErrors(Body, { name: 'Acme', products: [{ price: Number.POSITIVE_INFINITY, quantity: 1, discount: 0 }] })).toEqual([
      { field: 'products[0].price', message: 'must be a finite number' },
    ]);
  });
});

describe('calendar formats', () => {
  const dates = Type.Object({ d: DateOnly() });
  const instants = Type.Object({ t: Timestamp() });
  test('dates exist in the calendar, 0001..9999', () => {
    for (const ok of ['2024-02-29', '0001-01-01', '9999-12-31']) expect(schemaErrors(dates, { d: ok })).toEqual([]);
    for (const bad of ['2026-02-30', '2023-02-29', '2026-13-01', '0000-01-01', '10000-01-01', '2026-1-1', '2026-01-01T00:00:00Z'])
      expect(schemaErrors(dates, { d: bad })).toHaveLength(1);
  });
  test('instants are RFC 3339 with Z or an offset', () => {
    for (const ok of ['2026-11-21T10:00:00.000Z', '2026-11-21T10:00:00+01:00', '2024-02-29T23:59:59-12:00'])
      expect(schemaErrors(instants, { t: ok })).toEqual([]);
    for (const bad of ['2026-02-30T00:00:00Z', '2026-11-21T10:00:00', '2026-11-21', '2026-11-21T24:00:00Z', 'yesterday'])
      expect(schemaErrors(instants, { t: bad })).toHaveLength(1);
  });
});

describe('queryErrors: raw query strings against the schema', () => {
  const Query = t.Object(
    {
      per_page: t.Optional(t.Integer({ minimum: 1, maximum: 100 })),
      page: t.Optional(t.Integer({ minimum: 1, maximum: 2_147_483_647 })),
      updated_since: t.Optional(t.String({ format: 'date-time' })),
      enterprise_id: t.Optional(t.Integer({ minimum: 1, maximum: 2_147_483_647 })),
    },
    { additionalProperties: true },
  );
  test('every failing parameter named with its rule, unknown parameters only checked for NUL', () => {
    expect(
      queryErrors(Query, {
        per_page: '0',
        page: '2147483648',
        updated_since: '2026-02-30T00:00:00Z',
        enterprise_id: 'x',
        other: 'a\u0000b',
      }),
    ).toEqual([
      { field: 'other', message: 'must not contain the NUL character (U+0000)' },
      { field: 'per_page', message: 'must be at least 1' },
      { field: 'page', message: 'must be at most 2147483647' },
      { field: 'updated_since', message: 'must be an RFC 3339 timestamp with Z or a ±hh:mm offset' },
      { field: 'enterprise_id', message: 'must be an integer' },
    ]);
    expect(queryErrors(Query, { per_page: '100', page: '3', unknown: 'fine' })).toEqual([]);
  });
  test('sort names the sortable fields', () => {
    expect(sortErrors('-name', ['id', 'name'])).toEqual([]);
    expect(sortErrors('email', ['id', 'name'])).toEqual([{ field: 'sort', message: 'must be one of id, name (prefix - for descending)' }]);
  });
});

describe('readJsonBody: the JSON boundary', () => {
  const post = (body: BodyInit, type = 'application/json') =>
    new Request('http://localhost/x', { method: 'POST', body, headers: { 'content-type': type } });
  const failure = async (request: Request) => {
    try {
      await readJsonBody(request, request.headers.get('content-type') ?? '');
    } catch (error) {
      return error as AppError;
    }
    throw new Error('expected a failure');
  };

  test('malformed input is 400, NUL and non-finite numbers are named 422 fields', async () => {
    expect((await failure(post(new Uint8Array([0x7b, 0xff, 0x7d])))).type).toBe('bad_request');
    expect((await failure(post('{"name":"\\ud800"}'))).type).toBe('bad_request');
    expect((await failure(post(`${'['.repeat(65)}${']'.repeat(65)}`))).type).toBe('bad_request');
    expect((await failure(post('{"a":1}', 'multipart/form-data; boundary=x'))).type).toBe('bad_request');
    expect((await failure(post('a=1', 'application/x-www-form-urlencoded'))).type).toBe('bad_request');
    const nul = await failure(post('{"name":"a\\u0000b","rates":[{"price":1e400}]}'));
    expect(nul.type).toBe('validation_error');
    expect(nul.details).toEqual([
      { field: 'name', message: 'must not contain the NUL character (U+0000)' },
      { field: 'rates[0].price', message: 'must be a finite number' },
    ]);
  });

  test('well-formed JSON passes; no body needs no Content-Type', async () => {
    expect(await readJsonBody(post('{"name":"\\ud83d\\ude00","n":[1,2]}', 'application/json; charset=utf-8'), 'application/json')).toEqual({
      name: '😀',
      n: [1, 2],
    });
    expect(await readJsonBody(new Request('http://localhost/x', { method: 'POST' }), '')).toBeUndefined();
    expect(inspectJson(JSON.parse(`${'['.repeat(64)}${']'.repeat(64)}`))).toEqual([]);
  });
});

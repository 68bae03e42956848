import { describe, expect, test } from 'bun:test';
import { fieldPath, validationDetails } from './validation.ts';

describe('fieldPath', () => {
  test('JSON pointers become the contract paths', () => {
    expect(fieldPath('/rates/0/price')).toBe('rates[0].price');
    expect(fieldPath('/location/city')).toBe('location.city');
    expect(fieldPath('/3/email', 'data')).toBe('data.3.email'.replace('.3', '[3]'));
    expect(fieldPath('')).toBe('body');
  });
});

describe('validationDetails', () => {
  test('one detail per field, required and unknown fields worded for humans, children of a failing parent dropped', () => {
    const details = validationDetails([
      { path: '/name', message: 'Expected required property', type: 45 },
      { path: '/name', message: 'Expected string', type: 54 },
      { path: '/bogus', message: 'Unexpected property', type: 42 },
      { path: '/rates/0/price', message: 'Expected number to be greater or equal to 0', type: 39 },
      { path: '/products/2/quantity', message: 'Expected number to be greater than 0', type: 40 },
      { path: '/location', message: 'Expected object', type: 46 },
      { path: '/location/city', message: 'Expected string', type: 54 },
      { path: '/email', message: "Expected string to match 'email' format", type: 50 },
      {
        path: '/page',
        message: 'Expected union value',
        type: 62,
        schema: { anyOf: [{ type: 'string', format: 'integer' }, { type: 'integer' }] },
      },
      { path: '/phone', message: 'Expected union value', type: 62, schema: { anyOf: [{ type: 'string' }, { type: 'null' }] } },
    ]);
    expect(details).toEqual([
      { field: 'name', message: 'is required' },
      { field: 'bogus', message: 'is not a known field' },
      { field: 'rates[0].price', message: 'must be >= 0' },
      { field: 'products[2].quantity', message: 'must be > 0' },
      { field: 'location', message: 'must be an object' },
      { field: 'email', message: 'must be a valid e-mail address' },
      { field: 'page', message: 'must be an integer' },
      { field: 'phone', message: 'must be a string or null' },
    ]);
  });
});

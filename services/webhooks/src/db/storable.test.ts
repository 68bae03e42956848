import { expect, test } from 'bun:test';
import { envelopeProblem } from '../ingest/consumer.ts';
import { isStorableText, storableJson, storableText } from './storable.ts';

test('storableText replaces NUL and unpaired surrogates with U+FFFD and keeps surrogate pairs', () => {
  expect(storableText('a\u0000b')).toBe('a\uFFFDb');
  expect(storableText('\ud800x\udc00')).toBe('\uFFFDx\uFFFD');
  expect(storableText('\udc00\ud800')).toBe('\uFFFD\uFFFD');
  expect(storableText('smile \ud83d\ude00')).toBe('smile \ud83d\ude00');
  expect(storableText(null)).toBeNull();
  expect(isStorableText('plain')).toBe(true);
  expect(isStorableText('\u0000')).toBe(false);
});

test('storableJson walks values and keys, says whether it repaired anything, and returns clean values as they are', () => {
  const clean = { a: [1, 'x', null, { b: true }] };
  expect(storableJson(clean)).toEqual({ value: clean, repaired: false });
  expect(storableJson(clean).value).toBe(clean);
  expect(storableJson({ 'k\u0000': ['v\u0000', { deep: '\ud800' }], n: 1.5 })).toEqual({
    value: { 'k\uFFFD': ['v\uFFFD', { deep: '\uFFFD' }], n: 1.5 },
    repaired: true,
  });
  expect(storableJson('\u0000')).toEqual({ value: '\uFFFD', repaired: true });
});

test('envelopeProblem refuses what can never be stored: missing, over-long or NUL ids, tenants and types; bad timestamps', () => {
  const ok = { id: 'evt_1', tenant_id: 't', type: 'contact.created', occurred_at: '2026-11-21T10:00:00.000Z', data: { x: '\u0000' } };
  expect(envelopeProblem(ok)).toBeUndefined();
  expect(envelopeProblem(null)).toContain('not an object');
  expect(envelopeProblem({ ...ok, id: undefined })).toContain('lacks id');
  expect(envelopeProblem({ ...ok, tenant_id: '' })).toContain('lacks tenant_id');
  expect(envelopeProblem({ ...ok, type: 'x'.repeat(256) })).toContain('longer than 255');
  expect(envelopeProblem({ ...ok, id: 'evt_\u0000' })).toContain('U+0000');
  expect(envelopeProblem({ ...ok, type: 'contact.\ud800' })).toContain('unpaired surrogate');
  for (const occurred_at of ['2026-02-30T00:00:00Z', '2026-11-21', 'yesterday', 5])
    expect(envelopeProblem({ ...ok, occurred_at })).toContain('occurred_at');
});

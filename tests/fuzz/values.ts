// Valid-shaped values from a JSON schema, as fast-check arbitraries: the shape a careful client
// would send. Domain hints (a contact that exists, the owner's e-mail, a category reference)
// are preferred where the schema alone cannot guess a value the server would accept.
import fc from 'fast-check';
import { acceptsNull, nonNullBranches, type Schema, stringFormat, typeOf } from './openapi.ts';
import { PoolRef } from './pool.ts';

export type Hints = Map<string, fc.Arbitrary<unknown>>;

const letters = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const textUnit = fc.oneof(
  { arbitrary: fc.constantFrom(...letters), weight: 20 },
  { arbitrary: fc.constantFrom(' ', '-', '.', '_'), weight: 2 },
  { arbitrary: fc.constantFrom('é', 'ß', '漢', '😀', 'Ω'), weight: 1 },
);

/** A short word of letters and digits (never empty). */
export const word = fc.string({ unit: fc.constantFrom(...letters), minLength: 3, maxLength: 10 });

/** A valid-shaped value for `schema`; `trail` names where it sits (`products[].reference`). */
export function validValue(schema: Schema, trail: string, hints: Hints, depth = 0): fc.Arbitrary<unknown> {
  const fromSchema = schemaValue(schema, trail, hints, depth);
  const hint = hintFor(trail, hints);
  const shaped = hint ? fc.oneof({ arbitrary: hint, weight: 6 }, { arbitrary: fromSchema, weight: 1 }) : fromSchema;
  return acceptsNull(schema) ? fc.oneof({ arbitrary: shaped, weight: 8 }, { arbitrary: fc.constant(null), weight: 1 }) : shaped;
}

/** The hint for a trail: by its last two segments (`products[].reference`), then its last one. */
function hintFor(trail: string, hints: Hints): fc.Arbitrary<unknown> | undefined {
  const segments = trail.split('.');
  return hints.get(segments.slice(-2).join('.')) ?? hints.get((segments.at(-1) ?? '').replace(/\[\]$/, ''));
}

function schemaValue(schema: Schema, trail: string, hints: Hints, depth: number): fc.Arbitrary<unknown> {
  const branches = nonNullBranches(schema);
  if (branches.length > 1) return fc.oneof(...branches.map((b) => schemaValue(b, trail, hints, depth)));
  const s = branches[0] ?? schema;
  if (s.const !== undefined) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum.filter((v: unknown) => v !== null));
  switch (typeOf(s)) {
    case 'string':
      return stringValue(s);
    case 'integer':
      return integerValue(s);
    case 'number':
      return numberValue(s);
    case 'boolean':
      return fc.boolean();
    case 'array':
      return arrayValue(s, trail, hints, depth);
    case 'object':
      return objectValue(s, trail, hints, depth);
    default:
      return fc.oneof(word, fc.integer({ min: 1, max: 100 }), fc.boolean());
  }
}

function stringValue(s: Schema): fc.Arbitrary<string> {
  const format = stringFormat(s);
  if (format === 'date')
    return fc
      .date({ min: new Date('2000-01-01'), max: new Date('2035-12-31'), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10));
  if (format === 'date-time')
    return fc.date({ min: new Date('2000-01-01'), max: new Date('2035-12-31'), noInvalidDate: true }).map((d) => d.toISOString());
  if (format === 'email') return fc.tuple(word, fc.nat(99999)).map(([w, n]) => `${w.toLowerCase()}${n}@fuzz.test`);
  if (format === 'uuid') return fc.uuid();
  if (format === 'uri' || format === 'url') return word.map((w) => `https://example.com/${w}`);
  if (typeof s.pattern === 'string') return patternValue(s.pattern, s.maxLength ?? 255);
  const minLength = Math.max(s.minLength ?? 0, 1);
  const maxLength = Math.max(minLength, Math.min(s.maxLength ?? 24, 24));
  return fc.string({ unit: textUnit, minLength, maxLength }).map((v) => v.trim() || 'x');
}

/** Strings matching a schema pattern (kept within the maximum length; a pattern fast-check cannot read gives words). */
function patternValue(pattern: string, maxLength: number): fc.Arbitrary<string> {
  try {
    return fc.stringMatching(new RegExp(pattern)).filter((v) => v.length <= maxLength);
  } catch {
    return word;
  }
}

function integerValue(s: Schema): fc.Arbitrary<number> {
  const min = s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : (s.minimum ?? 0);
  const max = s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : Math.min(s.maximum ?? min + 1000, min + 1000);
  return fc.integer({ min, max: Math.max(min, max) });
}

function numberValue(s: Schema): fc.Arbitrary<number> {
  const min = s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 0.01 : (s.minimum ?? 0);
  const max = s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 0.01 : Math.min(s.maximum ?? min + 10_000, min + 10_000);
  return fc.integer({ min: Math.ceil(min * 100), max: Math.floor(Math.max(min, max) * 100) }).map((cents) => cents / 100);
}

function arrayValue(s: Schema, trail: string, hints: Hints, depth: number): fc.Arbitrary<unknown[]> {
  const minLength = s.minItems ?? 0;
  const maxLength = Math.max(minLength, Math.min(s.maxItems ?? 3, 3));
  return fc.array(validValue(s.items ?? {}, `${trail}[]`, hints, depth + 1), { minLength, maxLength });
}

function objectValue(s: Schema, trail: string, hints: Hints, depth: number): fc.Arbitrary<unknown> {
  const properties: Record<string, Schema> = s.properties ?? {};
  if (Object.keys(properties).length === 0 || depth > 8) {
    return fc.dictionary(word, fc.oneof(word, fc.integer({ min: 0, max: 1000 }), fc.boolean()), { maxKeys: 3 });
  }
  const model = Object.fromEntries(
    Object.entries(properties).map(([key, child]) => [key, validValue(child, trail ? `${trail}.${key}` : key, hints, depth + 1)]),
  );
  return fc.record(model, { requiredKeys: (s.required ?? []).filter((k: string) => k in properties) });
}

/** What the fuzz tenant's seed data offers to the generators. */
export interface SeedFacts {
  ownerEmail: string;
  receiverUrl: string;
}

/**
 * Values a schema cannot guess: references to resources that exist (resolved when the case
 * runs), the account's user, a webhook target that answers, unique references and skus.
 */
export function domainHints({ ownerEmail, receiverUrl }: SeedFacts): Hints {
  const pick = fc.nat(60);
  const ref = (collection: string, field: PoolRef['field'], as: PoolRef['as'] = 'string') =>
    pick.map((n) => new PoolRef(collection, field, n, as));
  const unique = (prefix: string) => fc.tuple(word, fc.nat(999_999)).map(([w, n]) => `${prefix}-${w}-${n}`);
  return new Map<string, fc.Arbitrary<unknown>>([
    ['type', fc.constantFrom('client', 'lead', 'prospect', 'supplier', 'partner')],
    ['users', fc.constant([ownerEmail])],
    ['user_email', fc.constant(ownerEmail)],
    ['enterprise_identifier', ref('contacts', 'id')],
    ['enterprise_id', ref('contacts', 'id', 'number')],
    ['contact_id', ref('contacts', 'id', 'number')],
    ['opportunity_id', ref('opportunities', 'id', 'number')],
    ['product_category_ref', ref('product-categories', 'reference')],
    ['product_category_id', ref('product-categories', 'id', 'number')],
    ['parent_id', fc.oneof(fc.constant(0), ref('product-categories', 'id', 'number'))],
    ['document_category_id', ref('document-categories', 'id', 'number')],
    ['category_id', ref('document-categories', 'id', 'number')],
    ['products[].reference', ref('products', 'reference')],
    ['rate_sku', ref('products', 'sku')],
    ['reference', unique('FZ')],
    ['sku', unique('SKU')],
    ['url', fc.constant(`${receiverUrl}/hook`)],
    ['events', fc.constantFrom(['*'], ['contact.created', 'order.created'], ['product.updated'])],
    ['currency', fc.constant('EUR')],
    ['vat', fc.constantFrom(0, 4, 10, 21)],
    ['sort', fc.constantFrom('id', '-id', 'created_at', '-updated_at', 'name')],
  ]);
}

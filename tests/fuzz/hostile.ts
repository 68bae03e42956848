// Hostile values for JSON request bodies, one input class at a time, each put at a location the
// schema describes (any depth). Where contract §19/§3/§4 states the answer for a class, the
// mutation carries it as a named expectation; elsewhere only the invariants apply.
import fc from 'fast-check';
import { fieldName, type Leaf, type LeafKind, leavesOf, setAt } from './leaves.ts';
import type { Schema } from './openapi.ts';
import { type Hints, validValue, word } from './values.ts';
import { BadUtf8String, RawJson } from './wire.ts';

/** A stated answer for a class of input (contract section in the check's name). */
export interface Expectation {
  check: string;
  statuses: number[];
}

export interface BodyMutation {
  label: string;
  apply: (body: unknown) => unknown;
  expect?: Expectation;
}

export const JSON_BODY_CLASSES = [
  'nul-in-body',
  'lone-surrogate',
  'invalid-utf8',
  'big-integer',
  'big-number',
  'non-finite',
  'impossible-date',
  'deep-nesting',
  'unknown-field',
  'wrong-type',
  'oversize',
] as const;
export type JsonBodyClass = (typeof JSON_BODY_CLASSES)[number];

const STRING_KINDS: LeafKind[] = ['string', 'date', 'date-time'];
const at = (leaf: Leaf, value: unknown, label: string, expect?: Expectation): BodyMutation => ({
  label: `${label} at ${fieldName(leaf.path)}`,
  apply: (body) => setAt(body, leaf.path, value),
  expect,
});

export const IMPOSSIBLE_DATES = ['2026-02-30', '2026-13-01', '0000-01-01', '10000-01-01', '2025-02-29', '2026-00-10', '2026-1-5'];
export const IMPOSSIBLE_TIMESTAMPS = [
  '2026-02-30T00:00:00Z',
  '2026-01-01T00:00:00',
  '2026-13-01T00:00:00Z',
  '2026-01-01T24:61:00Z',
  '0000-01-01T00:00:00Z',
  '2026-01-01',
];
export const HUGE_INTEGERS = [
  '2147483648',
  '9007199254740993',
  '-1',
  '0',
  '2147483647',
  '-2147483649',
  '1e20',
  '99999999999999999999999999',
  '1.5',
];
const HUGE_NUMBERS = [
  '1e15',
  '999999999999.99',
  '999999999999.995',
  '1000000000000',
  '1e308',
  '-0.01',
  '1e-9',
  '1000000000.01',
  '123456789012345678901234567890.5',
];
const NON_FINITE = ['1e400', '-1e400', 'NaN', 'Infinity', '-Infinity'];
const BAD_UTF8 = [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]];
const LONE_SURROGATES = ['\\ud800', '\\udfff', '\\udc00\\ud800', '\\ud83d'];
const UNKNOWN_KEYS = ['unknown_field', '__proto__', 'constructor', 'Name', 'name ', '', 'nul\u0000key'];

const NUL_IN_BODY: Expectation = { check: '§19 NUL in a JSON body string → 422', statuses: [422] };
const LONE_SURROGATE: Expectation = { check: '§19 unpaired surrogate escape → 400', statuses: [400] };
const INVALID_UTF8: Expectation = { check: '§19 body that is not UTF-8 → 400', statuses: [400] };
const MALFORMED_JSON: Expectation = { check: '§3 malformed JSON (NaN, Infinity) → 400', statuses: [400] };
const TOO_DEEP: Expectation = { check: '§19 JSON nested deeper than 64 levels → 400', statuses: [400] };
const IMPOSSIBLE_DATE: Expectation = { check: '§19 impossible date or timestamp → 422', statuses: [422] };
const UNKNOWN_FIELD: Expectation = { check: '§4/§19 unknown body field → 422', statuses: [422] };
const TOO_LARGE: Expectation = { check: '§3 JSON body over 1 MB → 413', statuses: [413] };

const nulString = fc
  .tuple(word, fc.constantFrom('\u0000', '\u0000\u0000', 'a\u0000'), fc.constantFrom('', 'x', ' tail'))
  .map(([a, nul, b]) => `${a}${nul}${b}`);
const nested = (depth: number, shape: 'array' | 'object') =>
  new RawJson(shape === 'array' ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);

const TEXT_KINDS: LeafKind[] = [...STRING_KINDS, 'free-object'];
const ALL_KINDS: LeafKind[] = [...TEXT_KINDS, 'integer', 'number', 'boolean', 'array', 'object'];
/** A value inside a free-form object (`extra_fields`) or the value itself for a typed field. */
const placed = (leaf: Leaf, value: unknown) => (leaf.kind === 'free-object' ? { k: value } : value);

const nulMutation = (leaf: Leaf): fc.Arbitrary<BodyMutation> =>
  leaf.kind === 'free-object'
    ? fc.oneof(
        nulString.map((s) => at(leaf, { deep: { deeper: ['ok', s] } }, 'NUL in a nested value', NUL_IN_BODY)),
        fc.constant(at(leaf, { 'k\u0000ey': 1 }, 'NUL in an object key', NUL_IN_BODY)),
      )
    : nulString.map((s) => at(leaf, s, 'NUL in a string', NUL_IN_BODY));

const surrogateMutation = (leaf: Leaf) =>
  fc.constantFrom(...LONE_SURROGATES).map((esc) => at(leaf, placed(leaf, new RawJson(`"a${esc}b"`)), `"${esc}"`, LONE_SURROGATE));

const badUtf8Mutation = (leaf: Leaf) =>
  fc.constantFrom(...BAD_UTF8).map((bytes) => {
    const label = `bytes ${bytes.map((b) => b.toString(16)).join(' ')}`;
    return at(leaf, placed(leaf, new BadUtf8String('ab', bytes, 'cd')), label, INVALID_UTF8);
  });

const nonFiniteMutation = (leaf: Leaf) =>
  fc.constantFrom(...NON_FINITE).map((n) => at(leaf, new RawJson(n), `number ${n}`, n.includes('e') ? undefined : MALFORMED_JSON));

const dateMutation = (leaf: Leaf) =>
  fc
    .constantFrom(...(leaf.kind === 'date' ? IMPOSSIBLE_DATES : IMPOSSIBLE_TIMESTAMPS))
    .map((d) => at(leaf, d, `date ${d}`, IMPOSSIBLE_DATE));

const nestingMutation = (leaf: Leaf) =>
  fc
    .tuple(fc.constantFrom(65, 100, 1000, 20_000), fc.constantFrom<'array' | 'object'>('array', 'object'))
    .map(([depth, shape]) => at(leaf, nested(depth, shape), `${depth} nested ${shape}s`, TOO_DEEP));

const unknownFieldMutation = (leaf: Leaf) =>
  fc.tuple(fc.constantFrom(...UNKNOWN_KEYS), fc.constantFrom<unknown>(1, 'x', {}, null)).map(([key, value]) => ({
    label: `unknown field ${JSON.stringify(key)} in ${fieldName(leaf.path)}`,
    apply: (body: unknown) => setAt(body, [...leaf.path, key], value),
    expect: key.includes('\u0000') ? NUL_IN_BODY : UNKNOWN_FIELD,
  }));

/** Per class: where its values can go, and the values. */
const MUTATIONS: Record<JsonBodyClass, { kinds: LeafKind[]; build: (leaf: Leaf, hints: Hints) => fc.Arbitrary<BodyMutation> }> = {
  'nul-in-body': { kinds: TEXT_KINDS, build: nulMutation },
  'lone-surrogate': { kinds: TEXT_KINDS, build: surrogateMutation },
  'invalid-utf8': { kinds: TEXT_KINDS, build: badUtf8Mutation },
  'big-integer': {
    kinds: ['integer'],
    build: (leaf) => fc.constantFrom(...HUGE_INTEGERS).map((n) => at(leaf, new RawJson(n), `integer ${n}`)),
  },
  'big-number': {
    kinds: ['number', 'integer'],
    build: (leaf) => fc.constantFrom(...HUGE_NUMBERS).map((n) => at(leaf, new RawJson(n), `number ${n}`)),
  },
  'non-finite': { kinds: ['number', 'integer'], build: nonFiniteMutation },
  'impossible-date': { kinds: ['date', 'date-time'], build: dateMutation },
  'deep-nesting': { kinds: ALL_KINDS, build: nestingMutation },
  'unknown-field': { kinds: ['object'], build: unknownFieldMutation },
  'wrong-type': {
    kinds: ALL_KINDS,
    build: (leaf) => fc.constantFrom(...wrongTypes(leaf.kind)).map((v) => at(leaf, v, `wrong type ${JSON.stringify(v)}`)),
  },
  oversize: { kinds: ALL_KINDS, build: (leaf, hints) => oversize(leaf, hints) },
};

/** The mutations of one class for a body schema, or undefined when the schema has no place for it. */
export function bodyMutation(cls: JsonBodyClass, schema: Schema, hints: Hints): fc.Arbitrary<BodyMutation> | undefined {
  const { kinds, build } = MUTATIONS[cls];
  const candidates = leavesOf(schema).filter((leaf) => kinds.includes(leaf.kind));
  return candidates.length === 0 ? undefined : fc.constantFrom(...candidates).chain((leaf) => build(leaf, hints));
}

function wrongTypes(kind: LeafKind): unknown[] {
  const all: Record<LeafKind, unknown[]> = {
    string: [123, true, [], {}, ['a']],
    date: [20260101, true, {}],
    'date-time': [1767225600, {}],
    integer: ['12', true, 1.5, [], {}, '0x10'],
    number: ['1.5', true, [], {}, '1,5'],
    boolean: ['true', 1, 0, 'yes', []],
    array: [{}, 'a', 1, [[[]]]],
    object: [[], 'a', 1, true],
    'free-object': [[], 'a', 1, true],
  };
  return [...all[kind], null];
}

function oversize(leaf: Leaf, hints: Hints): fc.Arbitrary<BodyMutation> {
  const choices: fc.Arbitrary<BodyMutation>[] = [fc.constant(at(leaf, 'x'.repeat(1_100_000), 'a 1.1 MB string', TOO_LARGE))];
  if (leaf.kind === 'string')
    choices.push(fc.constant(at(leaf, 'y'.repeat((leaf.schema.maxLength ?? 255) + 1), 'a string one over its maximum length')));
  if (leaf.kind === 'string') choices.push(fc.constant(at(leaf, 'z'.repeat(70_000), 'a 70 000-character string')));
  if (leaf.kind === 'free-object') choices.push(fc.constant(at(leaf, { big: 'w'.repeat(17_000) }, 'a free-form object over 16 KB')));
  if (leaf.kind === 'array' && typeof leaf.schema.maxItems === 'number') {
    const count = leaf.schema.maxItems + 1;
    const item = validValue(leaf.schema.items ?? {}, `${String(leaf.path.at(-1) ?? '')}[]`, hints);
    choices.push(
      item.map((value) =>
        at(
          leaf,
          Array.from({ length: count }, () => value),
          `${count} items (maximum ${count - 1})`,
        ),
      ),
    );
  }
  return fc.oneof(...choices);
}

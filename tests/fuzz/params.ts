// Path and query parameters: valid ones (pointing at real resources where a path names one)
// and hostile ones, written as raw URL text so `%00`, `%FF` and encoded lone surrogates
// reach the server exactly as generated.
import fc from 'fast-check';
import { IMPOSSIBLE_TIMESTAMPS } from './hostile.ts';
import type { Operation, Param } from './openapi.ts';
import { collectionOfParam, PoolRef } from './pool.ts';
import { type Hints, validValue, word } from './values.ts';

/** Text already encoded for a URL (sent as-is). */
export interface RawText {
  raw: string;
}
export type ParamValue = string | PoolRef | RawText;
export interface QueryPair {
  name: ParamValue;
  value: ParamValue;
}

export const GARBAGE_PATH_IDS = ['0', '-1', '2147483648', '9007199254740993', '99999999999999999999'];
const GARBAGE_PATH_TEXT = [
  'abc',
  '1e400',
  '1.5',
  '%201',
  '0x10',
  '%EF%BC%91',
  '%FF',
  '%ED%A0%80',
  '%25',
  '..',
  '%2F',
  '%F0%9F%98%80',
  'x'.repeat(3000),
  '1;DROP',
  "1'",
  '%0A1',
];
const raw = (text: string): RawText => ({ raw: text });

/** A path value pointing at a real resource of the collection the parameter names. */
export function realPathValue(op: Operation, param: Param): fc.Arbitrary<PoolRef> {
  const collection = collectionOfParam(op.path, param.name);
  const fields: PoolRef['field'][] =
    param.name === 'reference' ? ['reference'] : param.name === 'identifier' ? ['id', 'id', 'id', 'email', 'name'] : ['id'];
  return fc.tuple(fc.constantFrom(...fields), fc.nat(60)).map(([field, pick]) => new PoolRef(collection, field, pick));
}

/** A hostile path value: out-of-range ids, non-numbers, bad percent-encodings, huge text. */
export const garbagePathValue = fc.constantFrom(...GARBAGE_PATH_IDS, ...GARBAGE_PATH_TEXT).map(raw);

/** A path value with a NUL in it (`%00`), alone or inside an id or a word. */
export const nulPathValue = fc.oneof(
  fc.constant(raw('%00')),
  fc.constant(raw('1%00')),
  word.map((w) => raw(`${w}%00x`)),
);

/** Valid-shaped values for some of the operation's query parameters. */
export function validQuery(op: Operation, hints: Hints): fc.Arbitrary<QueryPair[]> {
  if (op.queryParams.length === 0) return fc.constant([]);
  return fc
    .subarray(op.queryParams, { maxLength: 3 })
    .chain((params) =>
      params.length === 0
        ? fc.constant([])
        : fc.tuple(...params.map((p) => validValue(p.schema, p.name, hints).map((v) => ({ name: p.name, value: queryText(v) })))),
    );
}

function queryText(value: unknown): ParamValue {
  if (value instanceof PoolRef) return value;
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

const NUL_IN_QUERY = { check: '§19 NUL in a query value → 422', statuses: [422] };
const QUERY_INT_RANGE = { check: '§19 out-of-range integer in a query → 422', statuses: [422] };
const QUERY_TIMESTAMP = { check: '§19 impossible date or timestamp → 422', statuses: [422] };

export interface HostileQuery {
  label: string;
  pairs: QueryPair[];
  expect?: { check: string; statuses: number[] };
}

/** One hostile query parameter (known or unknown name), added to otherwise valid ones. */
export function hostileQuery(op: Operation): fc.Arbitrary<HostileQuery> {
  const known = (pick: (p: Param) => boolean) => op.queryParams.filter(pick);
  const nul = fc
    .tuple(fc.constantFrom('fuzz_unknown', ...op.queryParams.map((p) => p.name)), fc.constantFrom('%00', 'a%00b', '1%00'))
    .map(([name, value]) => ({
      label: `NUL in query ${name}`,
      pairs: [{ name, value: raw(value) }],
      expect: NUL_IN_QUERY,
    }));
  const choices: fc.Arbitrary<HostileQuery>[] = [nul, strangeQuery(op)];
  const integers = known((p) => p.schema.type === 'integer');
  if (integers.length > 0) {
    choices.push(
      fc.tuple(fc.constantFrom(...integers), fc.constantFrom('-1', '2147483648', '9007199254740993')).map(([p, value]) => ({
        label: `query ${p.name}=${value}`,
        pairs: [{ name: p.name, value }],
        expect: QUERY_INT_RANGE,
      })),
    );
  }
  const timestamps = known((p) => p.schema.format === 'date-time' || p.schema.format === 'date');
  if (timestamps.length > 0) {
    choices.push(
      fc.tuple(fc.constantFrom(...timestamps), fc.constantFrom(...IMPOSSIBLE_TIMESTAMPS)).map(([p, value]) => ({
        label: `query ${p.name}=${value}`,
        pairs: [{ name: p.name, value }],
        expect: QUERY_TIMESTAMP,
      })),
    );
  }
  return fc.oneof(...choices);
}

/** Odd but not stated-by-contract query input: bad encodings, huge values, repeats, brackets. */
function strangeQuery(op: Operation): fc.Arbitrary<HostileQuery> {
  const names = ['zz', '__proto__', 'per_page[]', 'a[b]', ...op.queryParams.map((p) => p.name)];
  const values = ['', 'abc', '1e400', '%FF', '%ED%A0%80', '1.5', '%', 'x'.repeat(10_000), '-0', '１', 'true', '[]'];
  return fc.tuple(fc.constantFrom(...names), fc.constantFrom(...values), fc.boolean()).map(([name, value, twice]) => ({
    label: `query ${name}=${value.length > 20 ? `${value.slice(0, 8)}…(${value.length})` : value}${twice ? ' (twice)' : ''}`,
    pairs: twice
      ? [
          { name: raw(name), value: raw(value) },
          { name: raw(name), value: raw('2') },
        ]
      : [{ name: raw(name), value: raw(value) }],
  }));
}

// One generated request per case: an operation, an input class, and the path, query and body
// that class calls for. Everything else about the request stays valid-shaped, so the class is
// what the server has to cope with.
import fc from 'fast-check';
import { type BodyMutation, bodyMutation, type Expectation, JSON_BODY_CLASSES, type JsonBodyClass } from './hostile.ts';
import type { Operation } from './openapi.ts';
import {
  GARBAGE_PATH_IDS,
  garbagePathValue,
  hostileQuery,
  nulPathValue,
  type ParamValue,
  type QueryPair,
  realPathValue,
  validQuery,
} from './params.ts';
import { hostileUpload, type MultipartBody, nulUpload, validUpload } from './uploads.ts';
import { type Hints, validValue } from './values.ts';

export type InputClass =
  | 'valid'
  | JsonBodyClass
  | 'wrong-content-type'
  | 'nul-in-path'
  | 'garbage-path'
  | 'hostile-query'
  | 'nul-in-multipart'
  | 'multipart-hostile'
  | 'unexpected-body';

export interface JsonBody {
  kind: 'json';
  value: unknown;
  contentType: string | null;
}
export interface BytesBody {
  kind: 'bytes';
  bytes: Uint8Array | string;
  contentType: string | null;
}
export type CaseBody = JsonBody | BytesBody | MultipartBody;

export interface FuzzCase {
  op: Operation;
  inputClass: InputClass;
  /** What was made hostile, for the report (`NUL in a string at location.city`). */
  label: string;
  path: Record<string, ParamValue>;
  query: QueryPair[];
  body?: CaseBody;
  /** The answer the contract states for this input, checked when the path names real resources. */
  expect?: Expectation;
}

const NON_JSON_TYPE: Expectation = { check: '§19 non-JSON Content-Type on a JSON endpoint → 400', statuses: [400] };
const OUT_OF_RANGE_PATH_ID: Expectation = { check: '§19 out-of-range numeric path id → 404', statuses: [404] };
/** With a body, validating it may come first: a generated body is only valid-shaped, not surely valid. */
const OUT_OF_RANGE_PATH_ID_WITH_BODY: Expectation = { check: OUT_OF_RANGE_PATH_ID.check, statuses: [404, 422] };
const NUL_IN_PATH: Expectation = { check: '§19 NUL in a path segment → 404 or 422', statuses: [404, 422] };

/** Every input class that makes sense for an operation. */
export function classesFor(op: Operation, hints: Hints): InputClass[] {
  const classes: InputClass[] = ['valid', 'valid', 'hostile-query'];
  if (op.pathParams.length > 0) classes.push('nul-in-path', 'garbage-path');
  if (op.body?.kind === 'json') {
    const schema = op.body.schema;
    classes.push('wrong-content-type', ...JSON_BODY_CLASSES.filter((cls) => bodyMutation(cls, schema, hints) !== undefined));
  } else if (op.body?.kind === 'multipart') {
    classes.push('nul-in-multipart', 'multipart-hostile', 'multipart-hostile', 'wrong-content-type');
  } else if (op.method !== 'GET') {
    classes.push('unexpected-body');
  }
  return classes;
}

/** The arbitrary of generated cases for one operation. */
export function caseArbitrary(op: Operation, hints: Hints): fc.Arbitrary<FuzzCase> {
  const mutations = new Map<JsonBodyClass, fc.Arbitrary<BodyMutation> | undefined>();
  const mutationOf = (cls: JsonBodyClass) => {
    if (!mutations.has(cls)) mutations.set(cls, op.body ? bodyMutation(cls, op.body.schema, hints) : undefined);
    return mutations.get(cls);
  };
  return fc.constantFrom(...classesFor(op, hints)).chain((cls) => caseOfClass(op, cls, hints, mutationOf));
}

interface Parts {
  path: Record<string, ParamValue>;
  query: QueryPair[];
  body?: CaseBody;
}
type Variant = Parts & { label: string; expect?: Expectation };
type Base = fc.Arbitrary<Parts>;
type MutationOf = (cls: JsonBodyClass) => fc.Arbitrary<BodyMutation> | undefined;

function caseOfClass(op: Operation, cls: InputClass, hints: Hints, mutationOf: MutationOf): fc.Arbitrary<FuzzCase> {
  const base = fc.record({ path: realPath(op), query: validQuery(op, hints), body: validBody(op, hints) });
  return variantOf(op, cls, base, mutationOf).map((variant) => ({ op, inputClass: cls, ...variant }));
}

/** The path, query and body of a class: the valid base with the class's hostile part put in. */
function variantOf(op: Operation, cls: InputClass, base: Base, mutationOf: MutationOf): fc.Arbitrary<Variant> {
  switch (cls) {
    case 'valid':
      return base.map((b) => ({ ...b, label: 'valid-shaped input' }));
    case 'hostile-query':
      return fc
        .tuple(base, hostileQuery(op))
        .map(([b, h]) => ({ ...b, query: [...b.query, ...h.pairs], label: h.label, expect: h.expect }));
    case 'nul-in-path':
    case 'garbage-path':
      return badPath(op, cls, base);
    case 'wrong-content-type':
      return op.body?.kind === 'multipart' ? jsonToUpload(base) : wrongContentType(base);
    case 'nul-in-multipart':
    case 'multipart-hostile':
      return fc
        .tuple(base, cls === 'nul-in-multipart' ? nulUpload : hostileUpload)
        .map(([b, u]) => ({ ...b, body: u.body, label: u.label, expect: u.expect }));
    case 'unexpected-body':
      return fc
        .tuple(base, unexpectedBody)
        .map(([b, body]) => ({ ...b, body, label: `a ${body.contentType ?? 'type-less'} body on a body-less route` }));
    default:
      return mutatedBody(base, mutationOf(cls));
  }
}

/** One path parameter replaced by a NUL-bearing or garbage value; the others stay real. */
function badPath(op: Operation, cls: 'nul-in-path' | 'garbage-path', base: Base): fc.Arbitrary<Variant> {
  return fc
    .tuple(base, fc.constantFrom(...op.pathParams), cls === 'nul-in-path' ? nulPathValue : garbagePathValue)
    .map(([b, param, value]) => {
      const outOfRangeId = ['id', 'document'].includes(param.name) && GARBAGE_PATH_IDS.includes(value.raw);
      const shown = value.raw.length > 24 ? `${value.raw.slice(0, 8)}…(${value.raw.length})` : value.raw;
      return {
        ...b,
        path: { ...b.path, [param.name]: value },
        label: `path ${param.name}=${shown}`,
        expect:
          cls === 'nul-in-path'
            ? NUL_IN_PATH
            : outOfRangeId
              ? op.body
                ? OUT_OF_RANGE_PATH_ID_WITH_BODY
                : OUT_OF_RANGE_PATH_ID
              : undefined,
      };
    });
}

function mutatedBody(base: Base, mutation: fc.Arbitrary<BodyMutation> | undefined): fc.Arbitrary<Variant> {
  if (!mutation) return base.map((b) => ({ ...b, label: 'valid-shaped input' }));
  return fc.tuple(base, mutation).map(([b, m]) => ({
    ...b,
    body: { kind: 'json', value: m.apply((b.body as JsonBody).value), contentType: 'application/json' },
    label: m.label,
    expect: m.expect,
  }));
}

function realPath(op: Operation): fc.Arbitrary<Record<string, ParamValue>> {
  return fc.record(Object.fromEntries(op.pathParams.map((p) => [p.name, realPathValue(op, p) as fc.Arbitrary<ParamValue>])));
}

function validBody(op: Operation, hints: Hints): fc.Arbitrary<CaseBody | undefined> {
  if (op.body?.kind === 'json') {
    return validValue(op.body.schema, '', hints).map((value) => ({ kind: 'json', value, contentType: 'application/json' }) as CaseBody);
  }
  if (op.body?.kind === 'multipart') return validUpload.map((u) => u.body as CaseBody);
  return fc.constant(undefined);
}

const STATED_NON_JSON = [
  'multipart/form-data; boundary=fuzzB',
  'application/x-www-form-urlencoded',
  'text/plain',
  'application/xml',
  'text/html; charset=utf-8',
];
const OTHER_TYPES = [
  null,
  'application/json; charset=iso-8859-1',
  'application/merge-patch+json',
  'application/octet-stream',
  'application/json, text/plain',
];
const FORM_BODIES: Record<string, string> = {
  'application/x-www-form-urlencoded': 'name=Acme&type=client',
  'multipart/form-data; boundary=fuzzB': '--fuzzB\r\nContent-Disposition: form-data; name="name"\r\n\r\nAcme\r\n--fuzzB--\r\n',
};

/** The valid JSON body (or a form-shaped one) sent with another Content-Type, none, or a JSON variant. */
function wrongContentType(base: Base): fc.Arbitrary<Variant> {
  return fc.tuple(base, fc.constantFrom(...STATED_NON_JSON, ...OTHER_TYPES), fc.boolean()).map(([b, contentType, formShaped]) => {
    const form = formShaped && contentType ? FORM_BODIES[contentType] : undefined;
    const body: CaseBody = form
      ? { kind: 'bytes', bytes: form, contentType }
      : { kind: 'json', value: (b.body as JsonBody).value, contentType };
    const stated = contentType !== null && STATED_NON_JSON.includes(contentType);
    return { ...b, body, label: `Content-Type ${contentType ?? '(none)'}`, expect: stated ? NON_JSON_TYPE : undefined };
  });
}

/** A JSON or form body sent to an upload route (which takes only multipart). */
function jsonToUpload(base: Base): fc.Arbitrary<Variant> {
  const bodies: BytesBody[] = [
    { kind: 'bytes', bytes: '{"name":"x","file":"aGVsbG8="}', contentType: 'application/json' },
    { kind: 'bytes', bytes: 'name=x&file=hello', contentType: 'application/x-www-form-urlencoded' },
    { kind: 'bytes', bytes: 'hello', contentType: 'text/plain' },
    { kind: 'bytes', bytes: 'hello', contentType: null },
  ];
  return fc
    .tuple(base, fc.constantFrom(...bodies))
    .map(([b, body]) => ({ ...b, body, label: `Content-Type ${body.contentType ?? '(none)'} on an upload route` }));
}

const unexpectedBody = fc.constantFrom<BytesBody>(
  { kind: 'bytes', bytes: '{"unexpected":true}', contentType: 'application/json' },
  { kind: 'bytes', bytes: '{"broken":', contentType: 'application/json' },
  { kind: 'bytes', bytes: 'a=1&b=\u0000', contentType: 'application/x-www-form-urlencoded' },
  { kind: 'bytes', bytes: Uint8Array.from([0xff, 0xfe, 0x00, 0x01]), contentType: null },
);

// Query strings are checked raw, against the route's query schema, before Elysia coerces them:
// after coercion a range error loses its field name, and an unknown parameter is never looked at.
import { type TObject, type TSchema, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { ErrorDetail } from '../errors.ts';
import { nulErrors } from './json-body.ts';
import { mergeDetails, throwIfInvalid } from './validate.ts';
import './formats.ts';
import './messages.ts';

type JsonSchema = Record<string, any>;

/** The numeric member of Elysia's coercion union (`anyOf [string, integer]`), else the schema itself. */
function scalarOf(schema: JsonSchema): JsonSchema {
  const numeric = (schema.anyOf as JsonSchema[] | undefined)?.find((m) => m.type === 'integer' || m.type === 'number');
  return numeric ? { ...numeric, minimum: schema.minimum ?? numeric.minimum, maximum: schema.maximum ?? numeric.maximum } : schema;
}

function numberRule(schema: JsonSchema): TSchema {
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = schema;
  const bounds = Object.fromEntries(
    Object.entries({ minimum, maximum, exclusiveMinimum, exclusiveMaximum }).filter(([, v]) => v !== undefined),
  );
  return schema.type === 'integer' ? Type.Integer(bounds) : Type.Number(bounds);
}

/** The message for one raw query value, or undefined when it satisfies the schema. */
function queryValueError(schema: JsonSchema, raw: string): string | undefined {
  const scalar = scalarOf(schema);
  if (scalar.type === 'integer' || scalar.type === 'number') {
    const text = raw.trim();
    const wellFormed = scalar.type === 'integer' ? /^[+-]?\d+$/.test(text) : text !== '' && Number.isFinite(Number(text));
    if (!wellFormed) return scalar.type === 'integer' ? 'must be an integer' : 'must be a number';
    return Value.Errors(numberRule(scalar), Number(text)).First()?.message;
  }
  if (scalar.type === 'boolean') return raw === 'true' || raw === 'false' ? undefined : 'must be true or false';
  return Value.Errors(scalar as TSchema, raw).First()?.message;
}

/**
 * Field errors of a raw query against a query schema: NUL in any parameter (known or not),
 * integers with their bounds, formats (`updated_since`), lengths and enums; one per parameter.
 */
export function queryErrors(schema: TObject, query: Record<string, unknown>): ErrorDetail[] {
  const details = nulErrors(query);
  const reported = new Set(details.map((d) => d.field));
  for (const [name, property] of Object.entries<JsonSchema>(schema.properties)) {
    const raw = query[name];
    if (raw === undefined || reported.has(name)) continue;
    const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
    const message = typeof value === 'string' ? queryValueError(property, value) : undefined;
    if (message) details.push({ field: name, message });
  }
  return details;
}

/** Field errors of a `sort` value against the sortable fields (`-field` for descending). */
export function sortErrors(sort: unknown, sortable: readonly string[]): ErrorDetail[] {
  if (sort === undefined) return [];
  const field = typeof sort === 'string' && sort.startsWith('-') ? sort.slice(1) : sort;
  return typeof field === 'string' && sortable.includes(field)
    ? []
    : [{ field: 'sort', message: `must be one of ${sortable.join(', ')} (prefix - for descending)` }];
}

/** Route options for a query: raw values checked against `schema`, every failing parameter in one 422. */
export function checkedQuery<S extends TObject>(schema: S, extra: (query: Record<string, unknown>) => ErrorDetail[] = () => []) {
  return {
    query: schema,
    transform: ({ query }: { query: Record<string, unknown> }) => throwIfInvalid(mergeDetails(queryErrors(schema, query), extra(query))),
  };
}

/** Route options for a list: `per_page`, `page`, `sort`, `updated_since` and the filters, checked the same way on every list. */
export function listQuery<S extends TObject>(schema: S, sortable: readonly string[]) {
  return checkedQuery(schema, (query) => sortErrors(query.sort, sortable));
}

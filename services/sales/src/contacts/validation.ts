import { type ListQuery, pageRequest } from '@crm/db';
import { type ErrorDetail, validationDetails, validationError } from '@crm/http';
import { Kind, type TSchema } from '@sinclair/typebox';
import { type ValueError, ValueErrorType } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';

/** A rule check a schema cannot express (unknown type, unknown user…); tolerates malformed input. */
export type RuleCheck = (body: unknown, tenantId: string) => Promise<ErrorDetail[]>;

/**
 * A nullable field (`location: {...} | null`) fails as one vague union error; when the value is
 * not null, report the non-null variant's own errors (`location.city`, `email` format) instead.
 */
function expandUnions(errors: Iterable<ValueError>): ValueError[] {
  return [...errors].flatMap((error) => {
    if (error.type !== ValueErrorType.Union || error.value === null) return [error];
    const variants = (error.schema.anyOf as TSchema[]).map((variant, i) => ({ variant, errors: error.errors[i] }));
    const nonNull = variants.filter(({ variant }) => variant[Kind] !== 'Null');
    if (nonNull.length !== 1 || nonNull.length === variants.length) return [error];
    return expandUnions((nonNull[0] as (typeof nonNull)[number]).errors ?? []);
  });
}

/** Schema failures of a value as field details, worded like the kit's own validation errors. */
export function schemaErrors(schema: TSchema, value: unknown): ErrorDetail[] {
  return validationDetails(
    expandUnions(Value.Errors(schema, value)).map(({ path, message, value, type }) => ({ path, message, value, type })),
  );
}

/** Schema details first, then rule details for fields the schema did not already report. */
export function mergeDetails(first: ErrorDetail[], second: ErrorDetail[]): ErrorDetail[] {
  const seen = new Set(first.map((d) => d.field));
  return [...first, ...second.filter((d) => !seen.has(d.field))];
}

/**
 * A `transform` hook that runs before Elysia's own body validation: when the body breaks the
 * schema it also runs the rule checks and throws ONE 422 naming every failing field. A body
 * that passes the schema goes on to the handler, which runs the same rules.
 */
export function validateBodyWithRules(schema: TSchema, rules: RuleCheck) {
  return async ({ body, tenantId }: { body: unknown; tenantId: string }) => {
    const fromSchema = schemaErrors(schema, body);
    if (fromSchema.length === 0) return;
    throw validationError(mergeDetails(fromSchema, await rules(body, tenantId)));
  };
}

/** Throws one validation error when any detail was collected. */
export function throwIfInvalid(details: ErrorDetail[]): void {
  if (details.length > 0) throw validationError(details);
}

/** Whether a value is a plain JSON object. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const EXTRA_FIELDS_MAX_BYTES = 16 * 1024;

/** The `extra_fields` ≤ 16 KB rule (contract §17) for a field path. */
export function extraFieldsErrors(value: unknown, field = 'extra_fields'): ErrorDetail[] {
  if (!isPlainObject(value)) return [];
  const bytes = new TextEncoder().encode(JSON.stringify(value)).length;
  return bytes > EXTRA_FIELDS_MAX_BYTES ? [{ field, message: `must be at most 16 KB of JSON (got ${bytes} bytes)` }] : [];
}

export interface IntegerQueryParam {
  name: string;
  min: number;
  max?: number;
}

const PAGING: IntegerQueryParam[] = [
  { name: 'per_page', min: 1, max: 100 },
  { name: 'page', min: 1 },
];

function integerParamErrors(query: Record<string, unknown>, params: IntegerQueryParam[]): ErrorDetail[] {
  return params.flatMap(({ name, min, max }): ErrorDetail[] => {
    const raw = query[name];
    if (raw === undefined) return [];
    const value = typeof raw === 'string' && /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(value)) return [{ field: name, message: 'must be an integer' }];
    if (value < min) return [{ field: name, message: `must be >= ${min}` }];
    if (max !== undefined && value > max) return [{ field: name, message: `must be <= ${max}` }];
    return [];
  });
}

/**
 * A list route's `transform` hook over the raw query: Elysia loses the field name when it
 * fails to coerce a query integer (`per_page=0` is reported on no field at all), so paging
 * and integer filters, `sort` and `updated_since` are checked here first, all in one 422.
 */
export function checkListQuery(sortable: readonly string[], integerFilters: IntegerQueryParam[] = []) {
  return ({ query }: { query: Record<string, unknown> }) => {
    const { per_page, page, ...rest } = query;
    const { errors } = pageRequest(rest as ListQuery, sortable);
    throwIfInvalid([...integerParamErrors(query, [...PAGING, ...integerFilters]), ...errors]);
  };
}

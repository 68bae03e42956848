import { type ErrorDetail, validationDetails, validationError } from '@crm/http';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/** A rule check a schema cannot express (unknown type, unknown user…); tolerates malformed input. */
export type RuleCheck = (body: unknown, tenantId: string) => Promise<ErrorDetail[]>;

/** Schema failures of a value as field details, worded like the kit's own validation errors. */
export function schemaErrors(schema: TSchema, value: unknown): ErrorDetail[] {
  return validationDetails([...Value.Errors(schema, value)]);
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

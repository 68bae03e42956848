// Shared schemas for what repeats across services, carrying the bounds of contract §19.
// Bodies use TypeBox's Type; path and query parameters use Elysia's `t`, which coerces strings.
import { Kind, type SchemaOptions, type Static, Type, TypeRegistry } from '@sinclair/typebox';
import { t } from 'elysia';
import './formats.ts';

/** The largest id or integer field (PostgreSQL `integer`). */
export const MAX_INT = 2_147_483_647;
/** The largest amount, price, cost or stock (`numeric(14,2)`), and the largest computed total. */
export const MAX_AMOUNT = 999_999_999_999.99;
/** The largest line quantity. */
export const MAX_QUANTITY = 1_000_000_000;
/** `extra_fields` JSON size limit (contract §17). */
export const EXTRA_FIELDS_MAX_BYTES = 16 * 1024;

/** An id in a body or query value: 1..2147483647. */
export const Id = (options: SchemaOptions = {}) => Type.Integer({ minimum: 1, maximum: MAX_INT, ...options });
/** A non-negative integer field (`state`, `primary`, `parent_id` with 0 = root): 0..2147483647. */
export const NonNegativeInt = (options: SchemaOptions = {}) => Type.Integer({ minimum: 0, maximum: MAX_INT, ...options });
/** Money, cost, price, stock: 0..999999999999.99, finite. */
export const Money = (options: SchemaOptions = {}) => Type.Number({ minimum: 0, maximum: MAX_AMOUNT, ...options });
/** A line quantity: greater than 0, at most 1000000000. */
export const Quantity = (options: SchemaOptions = {}) => Type.Number({ exclusiveMinimum: 0, maximum: MAX_QUANTITY, ...options });
/** A percentage (discount, vat, probability): 0..100. */
export const Percentage = (options: SchemaOptions = {}) => Type.Number({ minimum: 0, maximum: 100, ...options });
/** A calendar date `YYYY-MM-DD`, 0001-01-01..9999-12-31. */
export const DateOnly = (options: SchemaOptions = {}) => Type.String({ format: 'date', ...options });
/** An RFC 3339 instant with `Z` or an offset. */
export const Timestamp = (options: SchemaOptions = {}) => Type.String({ format: 'date-time', ...options });
/** A required short text: 1..255 characters. */
export const Name = (options: SchemaOptions = {}) => Type.String({ minLength: 1, maxLength: 255, ...options });

/** Whether a value is a plain JSON object. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

TypeRegistry.Set<{ maxBytes: number }>(
  'ExtraFields',
  (schema, value) => isPlainObject(value) && new TextEncoder().encode(JSON.stringify(value)).length <= schema.maxBytes,
);

/** `extra_fields`: a free-form object whose JSON is at most 16 KB. */
export const ExtraFields = (options: SchemaOptions = {}) =>
  Type.Unsafe<Record<string, unknown>>({
    [Kind]: 'ExtraFields',
    type: 'object',
    additionalProperties: true,
    maxBytes: EXTRA_FIELDS_MAX_BYTES,
    errorMessage: 'must be an object whose JSON is at most 16 KB',
    description: 'Free-form key/value object; its JSON must be at most 16 KB',
    ...options,
  });

/** `{ deleted: true }`, the answer of every DELETE. */
export const Deleted = Type.Object({ deleted: Type.Boolean() }, { title: 'Deleted', examples: [{ deleted: true }] });
export type Deleted = Static<typeof Deleted>;

/** A numeric id in a path: outside 1..2147483647 (or not a number) the resource is simply not found (404). */
export const PathId = (description = 'Numeric id') => t.Integer({ minimum: 1, maximum: MAX_INT, description });
/** Path parameters `{ id }`. */
export const IdParams = t.Object({ id: PathId() });
/** An id filter in a query string (`enterprise_id=…`): 1..2147483647, else 422. */
export const QueryId = (description?: string) => t.Optional(t.Integer({ minimum: 1, maximum: MAX_INT, description }));

// The one validation pipeline of every JSON route: the schema is checked once; when it fails,
// the route's rules (references to look up in the database…) run over the same body so that
// ONE 422 names every failing field (contract §3). A body that passes goes to the handler,
// whose service applies the same rules to the typed value.
import { Kind, type TSchema } from '@sinclair/typebox';
import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler';
import type { ValueError } from '@sinclair/typebox/errors';
import { ValueErrorType } from '@sinclair/typebox/errors';
import { type ErrorDetail, validationError } from '../errors.ts';
import { validationDetails } from '../validation.ts';
import './formats.ts';
import './messages.ts';

/**
 * A rule a schema cannot express (an unknown contact type, a duplicate sku…); must tolerate malformed
 * input. `params` are the route's raw path parameters, not yet checked (`/categories/:id` → `{ id: '7' }`);
 * `requestId` goes with any call the rule makes to another service.
 */
export type RuleCheck = (
  body: unknown,
  context: { tenantId: string; requestId: string; params: Record<string, string | undefined> },
) => ErrorDetail[] | Promise<ErrorDetail[]>;

const checks = new WeakMap<TSchema, TypeCheck<TSchema>>();

function compiled(schema: TSchema): TypeCheck<TSchema> {
  let check = checks.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    checks.set(schema, check);
  }
  return check;
}

/**
 * A nullable field (`location: {...} | null`) fails as one vague union error; when the value is
 * not null, report the non-null variant's own errors (`location.city`, `email` format) instead.
 */
export function expandUnions(errors: Iterable<ValueError>): ValueError[] {
  return [...errors].flatMap((error) => {
    if (error.type !== ValueErrorType.Union || error.value === null) return [error];
    const variants = ((error.schema.anyOf ?? []) as TSchema[]).map((variant, i) => ({ variant, errors: error.errors?.[i] }));
    const nonNull = variants.filter(({ variant }) => variant[Kind] !== 'Null' && variant.type !== 'null');
    if (nonNull.length !== 1 || nonNull.length === variants.length) return [error];
    const inner = expandUnions((nonNull[0] as (typeof nonNull)[number]).errors ?? []);
    // A plain type mismatch (`phone: 3`) reads better as the union: "must be a string or null".
    return inner.every((e) => e.path === error.path && TYPE_MISMATCH.has(e.type)) ? [error] : inner;
  });
}

const TYPE_MISMATCH = new Set([
  ValueErrorType.String,
  ValueErrorType.Number,
  ValueErrorType.Integer,
  ValueErrorType.Boolean,
  ValueErrorType.Object,
  ValueErrorType.Array,
]);

/** Schema failures of a value as field details (`rates[0].price must be at least 0`); empty when valid. */
export function schemaErrors(schema: TSchema, value: unknown, prefix = ''): ErrorDetail[] {
  const check = compiled(schema);
  if (check.Check(value)) return [];
  return validationDetails(expandUnions(check.Errors(value)), prefix);
}

/** Schema details first, then rule details for fields the schema did not already report. */
export function mergeDetails(first: ErrorDetail[], second: ErrorDetail[]): ErrorDetail[] {
  const seen = new Set(first.map((d) => d.field));
  return [...first, ...second.filter((d) => !seen.has(d.field))];
}

/** Throws one validation error when any detail was collected. */
export function throwIfInvalid(details: ErrorDetail[]): void {
  if (details.length > 0) throw validationError(details);
}

/**
 * Route options for a JSON body: `{ body: schema, transform }`. The transform runs before
 * Elysia's own check; on a schema failure it adds the rules' findings and throws one 422.
 */
export function jsonBody<S extends TSchema>(schema: S, rules?: RuleCheck) {
  return {
    body: schema,
    // `params` is typed loosely so routes whose params schema coerces (`IdParams` → number) type-check;
    // a transform runs before Elysia's validation, so at this point the values are still the raw strings.
    transform: async (ctx: { body: unknown; tenantId: string; requestId: string; params?: Record<string, unknown> }) => {
      const { body, tenantId, requestId, params } = ctx;
      const fromSchema = schemaErrors(schema, body);
      if (fromSchema.length === 0) return;
      throw validationError(
        rules
          ? mergeDetails(
              fromSchema,
              await rules(body, { tenantId, requestId, params: (params ?? {}) as Record<string, string | undefined> }),
            )
          : fromSchema,
      );
    },
  };
}

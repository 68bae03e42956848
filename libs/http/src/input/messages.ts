// One wording for every schema failure (contract §19: messages state the rule that failed).
// TypeBox's error function is the supported hook; Elysia's own validation errors use it too.
import { Kind, type TSchema } from '@sinclair/typebox';
import { DefaultErrorFunction, ValueErrorType as E, type ErrorFunctionParameter, SetErrorFunction } from '@sinclair/typebox/errors';
import { Value } from '@sinclair/typebox/value';

const FORMATS: Record<string, string> = {
  email: 'must be a valid e-mail address',
  date: 'must be a calendar date YYYY-MM-DD between 0001-01-01 and 9999-12-31',
  'date-time': 'must be an RFC 3339 timestamp with Z or a ±hh:mm offset',
  uri: 'must be an absolute URL',
};

const article = (word: string) => (/^[aeiou]/.test(word) ? `an ${word}` : `a ${word}`);

/** Words a failed union: an enum of literals, a nullable type, or Elysia's string→number coercion. */
function unionMessage(schema: TSchema, value: unknown): string {
  const members = (schema.anyOf ?? []) as TSchema[];
  if (members.length > 0 && members.every((m) => m.const !== undefined))
    return `must be one of ${members.map((m) => String(m.const)).join(', ')}`;
  const numeric = members.find((m) => m.type === 'integer' || m.type === 'number');
  // Elysia's coercing `t.Integer`/`t.Numeric` is `anyOf [numeric string, number]`: a number that
  // breaks a bound gets the bound's message, not "must be an integer".
  if (numeric && typeof value === 'number') {
    const rule: Record<string, unknown> = {
      ...numeric,
      minimum: schema.minimum ?? numeric.minimum,
      maximum: schema.maximum ?? numeric.maximum,
    };
    delete rule.anyOf;
    const first = Value.Errors(rule as unknown as TSchema, value).First();
    if (first) return first.message;
  }
  const types = new Set(
    members.map((m) => (m.type === 'string' && (m.format === 'integer' || m.format === 'numeric') ? m.format : m.type)),
  );
  if (types.has('integer')) return 'must be an integer';
  if (types.has('number') || types.has('numeric')) return 'must be a number';
  const named = [...types].filter((t): t is string => typeof t === 'string' && t !== 'null');
  if (named.length === 1) return `must be ${article(named[0] as string)}${types.has('null') ? ' or null' : ''}`;
  return 'must be one of the allowed values';
}

/** The message of one schema failure, stating the rule (`must be at most 1000000`). */
export function schemaErrorMessage({ errorType, schema, value }: ErrorFunctionParameter): string {
  const s = schema as Record<string, any>;
  switch (errorType) {
    case E.ObjectRequiredProperty:
      return 'is required';
    case E.ObjectAdditionalProperties:
      return 'is not a known field';
    case E.IntegerMaximum:
    case E.NumberMaximum:
      return `must be at most ${s.maximum}`;
    case E.IntegerMinimum:
    case E.NumberMinimum:
      return `must be at least ${s.minimum}`;
    case E.IntegerExclusiveMinimum:
    case E.NumberExclusiveMinimum:
      return `must be greater than ${s.exclusiveMinimum}`;
    case E.IntegerExclusiveMaximum:
    case E.NumberExclusiveMaximum:
      return `must be less than ${s.exclusiveMaximum}`;
    case E.Integer:
      return typeof value === 'number' && !Number.isFinite(value) ? 'must be a finite integer' : 'must be an integer';
    case E.Number:
      return typeof value === 'number' ? 'must be a finite number' : 'must be a number';
    case E.String:
      return 'must be a string';
    case E.StringMinLength:
      return s.minLength === 1 ? 'must not be empty' : `must be at least ${s.minLength} characters`;
    case E.StringMaxLength:
      return `must be at most ${s.maxLength} characters`;
    case E.StringFormat:
    case E.StringFormatUnknown:
      return FORMATS[s.format] ?? `must be a valid ${s.format}`;
    case E.StringPattern:
      return s.patternMessage ?? `must match ${s.pattern}`;
    case E.Boolean:
      return 'must be a boolean';
    case E.Object:
      return 'must be an object';
    case E.Array:
      return 'must be an array';
    case E.ArrayMinItems:
      return `must have at least ${s.minItems} item${s.minItems === 1 ? '' : 's'}`;
    case E.ArrayMaxItems:
      return `must have at most ${s.maxItems} items`;
    case E.ObjectMaxProperties:
      return `must have at most ${s.maxProperties} fields`;
    case E.Null:
      return 'must be null';
    case E.Literal:
      return `must be ${JSON.stringify(s.const)}`;
    case E.Union:
      return unionMessage(schema, value);
    case E.Kind:
      return s.errorMessage ?? `must be ${article(String((schema as unknown as Record<symbol, unknown>)[Kind]))}`;
    default:
      return DefaultErrorFunction({ errorType, schema, value, path: '', errors: [] });
  }
}

SetErrorFunction(schemaErrorMessage);

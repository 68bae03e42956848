import type { ErrorDetail } from './errors.ts';

interface SchemaError {
  path: string;
  message: string;
  value?: unknown;
  type?: number;
  schema?: { anyOf?: { type?: string; format?: string }[] };
}

/** Turns a JSON pointer (`/rates/0/price`) into the contract's field path (`rates[0].price`). */
export function fieldPath(pointer: string, prefix = ''): string {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let out = prefix;
  for (const part of parts) {
    if (/^\d+$/.test(part)) out += `[${part}]`;
    else out += out ? `.${part}` : part;
  }
  return out || 'body';
}

const REQUIRED = 45; // TypeBox ValueErrorType.ObjectRequiredProperty
const UNEXPECTED = 42; // TypeBox ValueErrorType.ObjectAdditionalProperties

const UNION = 62; // TypeBox ValueErrorType.Union

/** Words a failed union from its members: coerced numbers ("integer" string | integer) and nullable fields. */
function describeUnion(error: SchemaError): string {
  const members = error.schema?.anyOf ?? [];
  const types = new Set(
    members.map((m) => (m.type === 'string' && (m.format === 'integer' || m.format === 'numeric') ? m.format : m.type)),
  );
  if (types.has('integer')) return 'must be an integer';
  if (types.has('number') || types.has('numeric')) return 'must be a number';
  const named = [...types].filter((t): t is string => !!t && t !== 'null');
  if (named.length === 1)
    return `must be a${/^[aeiou]/.test(named[0] as string) ? 'n' : ''} ${named[0]}${types.has('null') ? ' or null' : ''}`;
  return 'must be one of the allowed values';
}

function describe(error: SchemaError): string {
  if (error.type === REQUIRED) return 'is required';
  if (error.type === UNEXPECTED) return 'is not a known field';
  if (error.type === UNION) return describeUnion(error);
  const message = error.message.replace(/^Expected /, '').replace(/^string to match '(\w+)' format$/, 'a valid $1');
  if (/^(string|number|integer|boolean|object|array|union value|null)$/.test(message))
    return `must be ${message === 'union value' ? 'one of the allowed values' : `a${/^[aeiou]/.test(message) ? 'n' : ''} ${message}`}`;
  return `must be ${message}`
    .replace('must be a valid email', 'must be a valid e-mail address')
    .replace('must be number to be greater or equal to', 'must be >=')
    .replace('must be number to be greater than', 'must be >')
    .replace('must be number to be less than', 'must be <')
    .replace('must be integer to be greater than', 'must be >')
    .replace('must be integer to be less than', 'must be <')
    .replace('must be number to be less or equal to', 'must be <=')
    .replace('must be integer to be greater or equal to', 'must be >=')
    .replace('must be integer to be less or equal to', 'must be <=')
    .replace('must be string length less or equal to', 'must be at most')
    .replace('must be string length greater or equal to', 'must be at least')
    .replace('must be array length to be greater or equal to', 'must have at least')
    .replace('must be array length to be less or equal to', 'must have at most');
}

/**
 * Maps schema validation errors to one detail per failing field, in the order they were
 * found, with human wording ("name is required", "rates[0].price must be >= 0").
 */
export function validationDetails(errors: readonly SchemaError[], prefix = ''): ErrorDetail[] {
  const byField = new Map<string, string>();
  for (const error of errors) {
    const field = fieldPath(error.path, prefix);
    if (byField.has(field)) continue;
    byField.set(field, describe(error));
  }
  // A missing or mistyped container also reports its children; keep the outermost problem.
  const fields = [...byField.keys()];
  return fields
    .filter((f) => !fields.some((other) => other !== f && (f.startsWith(`${other}.`) || f.startsWith(`${other}[`))))
    .map((field) => ({ field, message: byField.get(field) as string }));
}

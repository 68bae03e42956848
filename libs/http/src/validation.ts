import type { ErrorDetail } from './errors.ts';

/** A schema failure as TypeBox reports it; `message` is already worded by `input/messages.ts`. */
interface SchemaError {
  path: string;
  message: string;
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

/**
 * Maps schema validation errors to one detail per failing field, in the order they were
 * found ("name is required", "rates[0].price must be at least 0").
 */
export function validationDetails(errors: readonly SchemaError[], prefix = ''): ErrorDetail[] {
  const byField = new Map<string, string>();
  for (const error of errors) {
    const field = fieldPath(error.path, prefix);
    if (byField.has(field)) continue;
    byField.set(field, error.message);
  }
  // A missing or mistyped container also reports its children; keep the outermost problem.
  const fields = [...byField.keys()];
  return fields
    .filter((f) => !fields.some((other) => other !== f && (f.startsWith(`${other}.`) || f.startsWith(`${other}[`))))
    .map((field) => ({ field, message: byField.get(field) as string }));
}

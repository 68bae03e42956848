// The JSON boundary of contract §19: what JSON.parse accepts but the API must not.
import { AppError, type ErrorDetail, validationError } from '../errors.ts';

/** JSON nested deeper than this is refused (400) before any schema sees it. */
export const MAX_JSON_DEPTH = 64;

const NUL = '\u0000';
// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const decoder = new TextDecoder('utf-8', { fatal: true });

/** `application/json` or any `+json` media type; parameters (charset) are ignored. */
export function isJsonMediaType(contentType: string): boolean {
  const type = contentType.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

const child = (path: string, key: string | number) => (typeof key === 'number' ? `${path}[${key}]` : path === '' ? key : `${path}.${key}`);

/**
 * Walks a parsed JSON value: nesting beyond 64 levels and unpaired surrogates are malformed
 * input (400); NUL characters and non-finite numbers (`1e400`) are field errors (422, named).
 */
export function inspectJson(value: unknown, path = '', depth = 1, details: ErrorDetail[] = []): ErrorDetail[] {
  if (depth > MAX_JSON_DEPTH) throw new AppError('bad_request', `JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  if (typeof value === 'string') {
    if (UNPAIRED_SURROGATE.test(value))
      throw new AppError('bad_request', `Malformed JSON body: ${path || 'body'} contains an unpaired surrogate`);
    if (value.includes(NUL)) details.push({ field: path || 'body', message: 'must not contain the NUL character (U+0000)' });
  } else if (typeof value === 'number') {
    if (!Number.isFinite(value)) details.push({ field: path || 'body', message: 'must be a finite number' });
  } else if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) inspectJson(item, child(path, i), depth + 1, details);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (UNPAIRED_SURROGATE.test(key)) throw new AppError('bad_request', 'Malformed JSON body: a key contains an unpaired surrogate');
      if (key.includes(NUL)) details.push({ field: child(path, key.replaceAll(NUL, '\\u0000')), message: 'is not a known field' });
      inspectJson(item, child(path, key), depth + 1, details);
    }
  }
  return details;
}

/**
 * Reads a JSON request body under the rules of §19: undefined when there is no body; 400 for
 * another Content-Type, bytes that are not UTF-8, malformed JSON, deep nesting or unpaired
 * surrogates; 422 naming every field that holds a NUL or a non-finite number.
 */
export async function readJsonBody(request: Request, contentType: string): Promise<unknown> {
  if (request.body === null) return undefined;
  const bytes = new Uint8Array(await request.arrayBuffer());
  if (bytes.length === 0) return undefined;
  if (!isJsonMediaType(contentType)) throw new AppError('bad_request', 'Content-Type must be application/json');
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw new AppError('bad_request', 'Malformed JSON body: not valid UTF-8');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AppError('bad_request', 'Malformed JSON body');
  }
  const details = inspectJson(value);
  if (details.length > 0) throw validationError(details);
  return value;
}

/** Field errors for NUL characters in flat string maps (query parameters, path parameters). */
export function nulErrors(values: Record<string, unknown> | undefined): ErrorDetail[] {
  if (!values) return [];
  const details: ErrorDetail[] = [];
  for (const [name, value] of Object.entries(values)) {
    const strings = Array.isArray(value) ? value : [value];
    if (name.includes(NUL) || strings.some((v) => typeof v === 'string' && v.includes(NUL)))
      details.push({ field: name.replaceAll(NUL, '\\u0000'), message: 'must not contain the NUL character (U+0000)' });
  }
  return details;
}

// PostgreSQL refuses two things JavaScript strings can hold: U+0000 (in `text`, and as `\u0000` in
// `jsonb`) and unpaired UTF-16 surrogates (not UTF-8 at all). Text that comes from outside the
// API's input boundary — an event from the stream, a receiver's answer — goes through here first.

/** The replacement character put where PostgreSQL could not store the original. */
export const REPLACEMENT = '\uFFFD';

// NUL, a high surrogate not followed by a low one, or a low one not preceded by a high one.
const UNSTORABLE_SOURCE = '\\u0000|[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF])|(?<![\\uD800-\\uDBFF])[\\uDC00-\\uDFFF]';
const UNSTORABLE = new RegExp(UNSTORABLE_SOURCE, 'g');
const UNSTORABLE_TEST = new RegExp(UNSTORABLE_SOURCE);

/** Whether PostgreSQL can store this string as it is. */
export function isStorableText(text: string): boolean {
  return !UNSTORABLE_TEST.test(text);
}

/** The string with every NUL and unpaired surrogate replaced by U+FFFD. */
export function storableText(text: string): string;
export function storableText(text: string | null): string | null;
export function storableText(text: string | null): string | null {
  return text === null || isStorableText(text) ? text : text.replace(UNSTORABLE, REPLACEMENT);
}

/**
 * A JSON value PostgreSQL can store as `jsonb`: every string (and key) made storable. `repaired`
 * says whether anything had to be replaced. The value is returned as is when nothing was.
 */
export function storableJson(value: unknown): { value: unknown; repaired: boolean } {
  let repaired = false;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      if (isStorableText(v)) return v;
      repaired = true;
      return storableText(v);
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(v)) {
        if (!isStorableText(key)) repaired = true;
        out[storableText(key)] = walk(item);
      }
      return out;
    }
    return v;
  };
  const walked = walk(value);
  return { value: repaired ? walked : value, repaired };
}

import type { ErrorDetail } from '@crm/http';
import { type TargetPolicy, targetRefusal } from './target-guard.ts';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

// Any Unicode whitespace, C0/C1 control (NUL, TAB, CR, LF, DEL…) or invisible format character
// (zero-width, bidi overrides). Checked on the raw string: WHATWG URL parsing silently drops TAB,
// CR and LF and trims spaces, so the parsed URL would hide what the client sent.
const FORBIDDEN_CHARACTER = /[\s\p{Cc}\p{Cf}]/u;

const codePoint = (char: string) => `U+${(char.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}`;

/**
 * The URL a webhook may POST to, or why not, by the rules that need no DNS (contract §20):
 * absolute http(s), no credentials, no whitespace or control characters, at most 2048 characters.
 */
export function parseWebhookUrl(raw: string): { url: URL; problem?: undefined } | { url?: undefined; problem: string } {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) {
    return { problem: `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters long (it has ${raw.length})` };
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: 'must be an absolute http(s) URL' };
  }
  // Parsing first only decides which message a non-URL gets; a string that parses is still refused here.
  const forbidden = FORBIDDEN_CHARACTER.exec(raw);
  if (forbidden) {
    return { problem: `must not contain whitespace or control characters (${codePoint(forbidden[0])} at position ${forbidden.index})` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: 'must be an http or https URL' };
  if (url.username !== '' || url.password !== '') return { problem: 'must not contain credentials (user:password@)' };
  return { url };
}

/**
 * Every rule a webhook URL must meet at registration and update: the ones above, then its host —
 * an IP literal, or every address its name resolves to — must be global unicast (or re-allowed by
 * `WEBHOOK_ALLOWED_NETS`). Returns the failures as `url` details (empty: acceptable).
 */
export async function checkWebhookUrl(raw: string, policy: TargetPolicy): Promise<ErrorDetail[]> {
  const { url, problem } = parseWebhookUrl(raw);
  const refusal = problem ?? (await targetRefusal(url as URL, policy));
  return refusal ? [{ field: 'url', message: refusal }] : [];
}

const KEY_FORMAT = /^crm_[A-Za-z0-9_-]{43}$/;

/** A new API key: `crm_` + 43 url-safe base64 characters (32 random bytes). */
export function generateApiKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `crm_${btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '')}`;
}

/** Whether a string has the shape of an API key (checked before hashing, to skip lookups of junk). */
export function looksLikeApiKey(value: string): boolean {
  return KEY_FORMAT.test(value);
}

/** Hex SHA-256 of a key: the only form in which keys are stored. */
export async function hashApiKey(key: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(key));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

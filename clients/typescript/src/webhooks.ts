import { WebhookVerificationError } from './errors.ts';
import type { WebhookEvent } from './types.ts';

/** Request headers as Fetch (`Headers`) or Node (`IncomingHttpHeaders`) give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** How far `webhook-timestamp` may be from now, either way, in seconds (default 300). */
  toleranceSeconds?: number;
  /** The current time in ms (tests). */
  now?: number;
}

const encoder = new TextEncoder();

function header(headers: WebhookHeaders, name: string): string {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? '';
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value.join(' ') : (value ?? '');
}

/** The key bytes of a Standard Webhooks secret: base64 after the `whsec_` prefix. */
function secretBytes(secret: string): Uint8Array {
  try {
    return Uint8Array.from(atob(secret.replace(/^whsec_/, '')), (c) => c.charCodeAt(0));
  } catch {
    throw new WebhookVerificationError('the webhook secret is not whsec_ followed by base64');
  }
}

function base64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Compares in time that depends only on the lengths, so a forger learns nothing from timing. */
function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

async function sign(secret: string, content: Uint8Array): Promise<string> {
  const key = await crypto.subtle.importKey('raw', secretBytes(secret) as BufferSource, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return base64(new Uint8Array(await crypto.subtle.sign('HMAC', key, content as BufferSource)));
}

/**
 * Checks a webhook delivery (Standard Webhooks, contract §16) and returns its event: the
 * `webhook-signature` must hold a `v1,<base64 HMAC-SHA256>` of `"<webhook-id>.<webhook-timestamp>.<body>"`
 * under one of `secrets` (pass the old and the new one while a rotation is in its grace period), and
 * the timestamp must be within `toleranceSeconds` of now. Pass the body exactly as received (the raw
 * text or bytes, not re-serialised JSON). Throws `WebhookVerificationError` otherwise.
 */
export async function verifyWebhook(
  body: string | Uint8Array,
  headers: WebhookHeaders,
  secrets: string | string[],
  { toleranceSeconds = 300, now = Date.now() }: VerifyOptions = {},
): Promise<WebhookEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature')
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => s.slice(3));
  if (!id || !timestamp || signatures.length === 0)
    throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or a v1 webhook-signature');
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not unix seconds');
  if (Math.abs(now / 1000 - Number(timestamp)) > toleranceSeconds)
    throw new WebhookVerificationError('webhook-timestamp is outside the tolerance');

  const bytes = typeof body === 'string' ? encoder.encode(body) : body;
  const content = concat(encoder.encode(`${id}.${timestamp}.`), bytes);
  for (const secret of Array.isArray(secrets) ? secrets : [secrets]) {
    const expected = await sign(secret, content);
    // Every candidate is compared, matched or not, so the time does not tell which one matched.
    const matched = signatures.map((s) => constantTimeEqual(s, expected)).includes(true);
    if (matched) return JSON.parse(new TextDecoder().decode(bytes)) as WebhookEvent;
  }
  throw new WebhookVerificationError('no webhook-signature matches the secret(s)');
}

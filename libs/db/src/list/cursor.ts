// Opaque keyset cursors (contract §22). A cursor carries the position after the last row
// returned — its sort value in PostgreSQL's own text form (full microsecond precision for
// timestamps, which a JS Date would round) and its id — plus a digest of the sort and filters
// it was made for, so that a cursor replayed with another sort or other filters is refused.
import { createHash } from 'node:crypto';

/** The position after which a cursor page continues. */
export interface CursorPosition {
  /** The last row's sort value as PostgreSQL prints it (`col::text`). */
  key: string;
  id: number;
}

interface CursorPayload {
  v: 1;
  /** Digest of sort + filters. */
  q: string;
  k: string;
  i: number;
}

/** A stable digest of the sort and filters a list was asked for (parameter order does not matter). */
export function listDigest(sort: string, filters: Record<string, unknown>): string {
  const entries = Object.entries(filters)
    .filter(([, value]) => value !== undefined && value !== null && value !== '')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256')
    .update(JSON.stringify([sort, entries]))
    .digest('base64url')
    .slice(0, 16);
}

/** Encodes the position after `position` for a list with this digest. */
export function encodeCursor(digest: string, position: CursorPosition): string {
  const payload: CursorPayload = { v: 1, q: digest, k: position.key, i: position.id };
  return Buffer.from(JSON.stringify(payload)).toString('base64url');
}

/**
 * Decodes a cursor made for a list with this digest. Returns the position, or a message for
 * the 422 on `cursor`: malformed, or made for another sort or other filters.
 */
export function decodeCursor(raw: string, digest: string): CursorPosition | { problem: string } {
  let payload: Partial<CursorPayload>;
  try {
    if (!/^[A-Za-z0-9_-]{1,2048}$/.test(raw)) throw new Error('not base64url');
    payload = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    return { problem: 'is not a valid cursor' };
  }
  const { v, q, k, i } = payload ?? {};
  if (v !== 1 || typeof q !== 'string' || typeof k !== 'string' || !Number.isSafeInteger(i) || (i as number) < 1 || k.includes('\u0000'))
    return { problem: 'is not a valid cursor' };
  if (q !== digest) return { problem: 'was made for another sort or other filters; repeat them, or start without a cursor' };
  return { key: k, id: i as number };
}

// Conditional requests (contract §24). A strong ETag is a digest of the resource exactly as the
// API returns it, so it changes whenever the representation does and needs no stored version.
import { createHash } from 'node:crypto';
import { AppError } from './errors.ts';

/** Bun's one-shot SHA-256 (no hasher object per call); undefined on other runtimes. */
const bunSha256 = (globalThis as { Bun?: { SHA256?: { hash(input: string, encoding: 'base64url'): string } } }).Bun?.SHA256;

/** The strong ETag of a representation already serialised with `JSON.stringify` (`"…"`). */
export function etagOfText(json: string): string {
  const digest = bunSha256 ? bunSha256.hash(json, 'base64url') : createHash('sha256').update(json).digest('base64url');
  return `"${digest.slice(0, 27)}"`;
}

/** The strong ETag of a representation (`"…"`): a digest of its JSON text. */
export function etagOf(representation: unknown): string {
  return etagOfText(JSON.stringify(representation));
}

function entityTags(header: string): string[] {
  return header.split(',').map((tag) => tag.trim());
}

/** `If-None-Match` (weak comparison): `*` or any listed tag equal to the current one, `W/` ignored. */
export function matchesIfNoneMatch(header: string | null, etag: string): boolean {
  if (!header) return false;
  return entityTags(header).some((tag) => tag === '*' || tag.replace(/^W\//, '') === etag);
}

/**
 * `If-Match` (strong comparison) against the current representation of an existing resource:
 * throws 412 `precondition_failed` when no listed tag matches; `*` matches any existing resource.
 * Call it where the resource is locked for the write, so that two writers with one ETag cannot both pass.
 */
export function assertIfMatch(header: string | null | undefined, current: unknown): void {
  if (header === null || header === undefined || header === '') return;
  const etag = etagOf(current);
  if (entityTags(header).some((tag) => tag === '*' || tag === etag)) return;
  throw new AppError(
    'precondition_failed',
    'If-Match does not match the current version of the resource (its ETag); read it again and retry',
  );
}

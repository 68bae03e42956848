import { AppError, ERROR_TYPE_HEADER } from '@crm/http';
import { requestFingerprint } from '@crm/idempotency';
import type { Kysely } from 'kysely';
import type { GatewayDatabase } from '../db/database.ts';
import type { RequestBody } from '../proxy/body.ts';
import { type ClaimOutcome, claimIdempotencyKey, completeIdempotencyKey, releaseIdempotencyKey, type StoredResponse } from './store.ts';

/**
 * Response headers kept with a stored result and replayed (contract §8: Location and content
 * headers; §24: ETag), and the error type of a stored error answer, which the audit record of a
 * replay names as it does the original's (the pipeline removes it from public answers).
 */
const REPLAYED_HEADERS = ['content-type', 'content-disposition', 'content-language', 'location', 'etag', ERROR_TYPE_HEADER];

/** Responses larger than this are returned but not stored (write responses are small JSON). */
const MAX_STORED_BYTES = 2 * 1024 * 1024;

export interface IdempotentCall {
  db: Kysely<GatewayDatabase>;
  tenantId: string;
  key: string;
  method: string;
  pathAndQuery: string;
  body: RequestBody;
  /** How long a claim blocks duplicates when its owner dies: upstream timeout plus a margin. */
  lockMs: number;
  execute: () => Promise<Response>;
  /**
   * The claim already attempted with the request's grant (`CLAIM_WITH_GRANT`): its fingerprint,
   * token, and whether it won. Absent: runIdempotent claims the key itself.
   */
  attempted?: { fingerprint: string; token: string; won: boolean };
}

function replay(stored: StoredResponse): Response {
  const headers = new Headers(stored.headers);
  headers.set('idempotent-replayed', 'true');
  return new Response(stored.body.byteLength > 0 ? (stored.body as BodyInit) : null, { status: stored.status, headers });
}

/**
 * Whether an upstream answer may be stored: < 500, not a 422 validation_error (contract §8, told by
 * the answer's X-Error-Type) and not a 412 precondition_failed (§24: the client retries the same
 * key with a fresh ETag).
 */
function isStorable(response: Response, bytes: Uint8Array): boolean {
  if (response.status >= 500 || response.status === 412 || bytes.byteLength > MAX_STORED_BYTES) return false;
  return response.headers.get(ERROR_TYPE_HEADER) !== 'validation_error';
}

/**
 * Runs a write under an Idempotency-Key: the first request claims the key and its upstream
 * answer is stored; a duplicate replays it (same status, body, Location and content headers,
 * plus `Idempotent-Replayed: true`), gets 409 while the first still runs, or 422 when the
 * method, path or body differ. Gateway-made errors, 5xx and validation errors release the key.
 */
export async function runIdempotent(call: IdempotentCall): Promise<Response> {
  const attempted = call.attempted;
  const fingerprint = attempted?.fingerprint ?? (await requestFingerprint(call.method, call.pathAndQuery, call.body));
  const claim: ClaimOutcome = attempted?.won
    ? { kind: 'claimed', token: attempted.token }
    : await claimIdempotencyKey(call.db, call.tenantId, call.key, fingerprint, call.lockMs, attempted?.token, attempted !== undefined);
  if (claim.kind !== 'claimed') {
    if (call.body.kind === 'multipart') await call.body.stream.cancel().catch(() => {});
    if (claim.kind === 'replay') return replay(claim.response);
    if (claim.kind === 'mismatch') {
      throw new AppError('idempotency_key_reused', 'This Idempotency-Key was already used with a different method, path or body');
    }
    throw new AppError('idempotency_key_in_use', 'A request with this Idempotency-Key is still in progress', undefined, {
      'retry-after': String(claim.retryAfterSeconds),
    });
  }

  let response: Response;
  let bytes: Uint8Array;
  try {
    response = await call.execute();
    bytes = new Uint8Array(await response.arrayBuffer());
  } catch (error) {
    await releaseIdempotencyKey(call.db, call.tenantId, call.key, claim.token);
    throw error;
  }
  if (isStorable(response, bytes)) {
    const headers: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const value = response.headers.get(name);
      if (value !== null) headers[name] = value;
    }
    await completeIdempotencyKey(call.db, call.tenantId, call.key, claim.token, { status: response.status, headers, body: bytes });
  } else {
    await releaseIdempotencyKey(call.db, call.tenantId, call.key, claim.token);
  }
  return new Response(bytes.byteLength > 0 ? (bytes as BodyInit) : null, { status: response.status, headers: response.headers });
}

import { preparedStatement } from '@crm/db';
import { type Kysely, sql } from 'kysely';
import type { GatewayDatabase } from '../db/database.ts';
import { CONSUME_SQL, type Consumed } from '../rate-limit/limiter.ts';

type Db = Kysely<GatewayDatabase>;

/** How long a finished record answers replays (contract §8). */
export const RETENTION_HOURS = 24;

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
}

/**
 * The gateway's records commit without waiting for the WAL flush (`synchronous_commit` off for
 * that one statement's transaction; its own durability is not needed): every keyed write is
 * also recorded by the owning service in the write's own transaction (contract §21,
 * `libs/idempotency`), so a claim or record lost in a PostgreSQL crash only sends the retry on to
 * the service, which replays its record (or serialises on it while the first still runs). One
 * flush (the service's) per keyed write instead of three.
 */
const NO_FLUSH = `(select set_config('synchronous_commit', 'off', true)) as no_flush`;

// Constant texts sent as named prepared statements: each connection parses and plans them once
// (a keyed write's claim and record cost about half the PostgreSQL CPU that way, loadtest/README.md).
/**
 * The claim's insert, its values numbered from `$first` (tenant, key, fingerprint, token, lock ms,
 * retention hours), selected `from` the given source. It wins when the key is new, when the
 * previous claim's owner died (its lock expired without a stored response), or when the stored
 * record is older than the retention.
 */
function claimInsert(first: number, from: string): string {
  const $ = (n: number) => `$${first + n}`;
  return `insert into idempotency_keys as k (tenant_id, key, fingerprint, claim_token, locked_until, created_at)
  select ${$(0)}, ${$(1)}, ${$(2)}, ${$(3)}::uuid, now() + ${$(4)}::float8 * interval '1 millisecond', now() from ${from}
  on conflict (tenant_id, key) do update set
    fingerprint = excluded.fingerprint, claim_token = excluded.claim_token, locked_until = excluded.locked_until,
    status = null, headers = null, body = null, created_at = excluded.created_at
  where (k.status is null and k.locked_until < now())
     or k.created_at < now() - ${$(5)}::float8 * interval '1 hour'
  returning claim_token`;
}

const CLAIM = preparedStatement<{ claim_token: string }>(claimInsert(1, NO_FLUSH));

/**
 * A write's rate-limit grant and, only if it passed, its key's claim: one statement, one round
 * trip (contract §7 before §8: the claim is made only for a granted request). Run by the
 * limiter's `takeWith` (parameters 1–5 the grant's, 6–11 the claim's); `claim_token` is null
 * when the request was refused or the key is held (a replay, in use, another fingerprint).
 */
export const CLAIM_WITH_GRANT = preparedStatement<Consumed & { claim_token: string | null }>(`
  with g as (${CONSUME_SQL}),
  c as (${claimInsert(6, `g, ${NO_FLUSH} where g.granted > 0`)})
  select g.anchor_ms, g.intervals, g.granted, g.now_ms, (select claim_token from c) as claim_token from g`);

const EXISTING = preparedStatement<{
  fingerprint: string;
  status: number | null;
  headers: Record<string, string> | null;
  body: Uint8Array | null;
}>('select fingerprint, status, headers, body from idempotency_keys where tenant_id = $1 and key = $2');

const COMPLETE = preparedStatement(`
  update idempotency_keys set status = $1, headers = $2::jsonb, body = $3, locked_until = null
  from ${NO_FLUSH}
  where tenant_id = $4 and key = $5 and claim_token = $6`);

const RELEASE = preparedStatement(`
  delete from idempotency_keys using ${NO_FLUSH}
  where tenant_id = $1 and key = $2 and claim_token = $3`);

/** Seconds a client is asked to wait before retrying a key that is still running. */
const IN_USE_RETRY_AFTER_S = 1;

export type ClaimOutcome =
  | { kind: 'claimed'; token: string }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'in_use'; retryAfterSeconds: number }
  | { kind: 'mismatch' };

/**
 * Claims (tenant, key) atomically for one request (`CLAIM`). When it loses, the existing record
 * decides: another fingerprint → mismatch; finished → replay; still running → in use. `token`
 * and `tried`: the claim was already attempted with this token in the write's grant
 * (`CLAIM_WITH_GRANT`) and lost, so the record is looked at first.
 */
export async function claimIdempotencyKey(
  db: Db,
  tenantId: string,
  key: string,
  fingerprint: string,
  lockMs: number,
  token: string = crypto.randomUUID(),
  tried = false,
): Promise<ClaimOutcome> {
  for (let attempt = 0; attempt < 3; attempt++) {
    if (!tried || attempt > 0) {
      const { rows } = await CLAIM.execute(db, [tenantId, key, fingerprint, token, lockMs, RETENTION_HOURS]);
      if (rows.length > 0) return { kind: 'claimed', token };
    }
    const existing = await EXISTING.execute(db, [tenantId, key]);
    const row = existing.rows[0];
    if (!row) continue; // released between the two statements: try to claim again
    if (row.fingerprint !== fingerprint) return { kind: 'mismatch' };
    if (row.status !== null)
      return { kind: 'replay', response: { status: row.status, headers: row.headers ?? {}, body: row.body ?? new Uint8Array() } };
    // The first request usually ends within a second; its claim's full lock (upstream timeout
    // plus margin) only matters when its owner died, so a client is asked for a short wait.
    return { kind: 'in_use', retryAfterSeconds: IN_USE_RETRY_AFTER_S };
  }
  return { kind: 'in_use', retryAfterSeconds: IN_USE_RETRY_AFTER_S };
}

/** Stores the response of a claimed key, if this request still owns the claim. */
export async function completeIdempotencyKey(db: Db, tenantId: string, key: string, token: string, response: StoredResponse) {
  await COMPLETE.execute(db, [response.status, JSON.stringify(response.headers), response.body, tenantId, key, token]);
}

/** Gives the key back (nothing stored) so the client may retry, if this request still owns the claim. */
export async function releaseIdempotencyKey(db: Db, tenantId: string, key: string, token: string) {
  await RELEASE.execute(db, [tenantId, key, token]);
}

/** Deletes records past the retention; returns how many. */
export async function purgeExpiredIdempotencyKeys(db: Db): Promise<number> {
  const result = await sql`delete from idempotency_keys where created_at < now() - ${RETENTION_HOURS} * interval '1 hour'`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

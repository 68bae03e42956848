// Exactly-once writes (contract §21). A keyed write runs in ONE transaction that also records
// (tenant, key, fingerprint) → the answer; a repeat of the key answers the recorded answer. So a
// client retrying with the same key gets one resource even when a gateway or a service dies
// between the commit and the answer.
import { preparedStatement } from '@crm/db';
import { AppError } from '@crm/http';
import type { ControlledTransaction, Kysely } from 'kysely';
import { RECORD_TTL_HOURS } from './purge.ts';

/** An answer recorded with its key. */
export interface RecordedAnswer {
  status: number;
  body: string;
  headers: Record<string, string>;
}

/** Answer headers kept with a record and replayed. */
const RECORDED_HEADERS = ['content-type', 'location', 'etag'];

// The statements of every keyed write, as named prepared statements (each connection plans them
// once). Parameters: $1 tenant, $2 key.

/** The key's lock, held until the write's transaction ends (a concurrent repeat waits for it). */
export const LOCK_KEY = preparedStatement("select pg_advisory_xact_lock(hashtextextended($1::text || ':' || $2::text, 0))");

/**
 * The answer recorded for the key, if any, in one statement with the removal of an expired record
 * (which no longer binds its key, whether or not the purge has run yet): the select leaves out
 * what the delete removes, both judged by the same `now()`.
 */
export const RECORDED_ANSWER = preparedStatement<RecordedAnswer & { fingerprint: string }>(
  `with expired as (
    delete from idempotency_records
    where tenant_id = $1 and key = $2 and created_at <= now() - make_interval(hours => ${RECORD_TTL_HOURS})
  )
  select fingerprint, status, body, headers from idempotency_records
  where tenant_id = $1 and key = $2 and created_at > now() - make_interval(hours => ${RECORD_TTL_HOURS})`,
);

/** Records the answer with the key. Further parameters: $3 fingerprint, $4 status, $5 body, $6 headers (JSON). */
const RECORD_ANSWER = preparedStatement(
  'insert into idempotency_records (tenant_id, key, fingerprint, status, body, headers) values ($1, $2, $3, $4, $5, $6::jsonb)',
);

/**
 * The database a request's handler writes through: the service's pool, or — while a keyed write
 * runs — the one transaction that will also hold its record. Services take it as their `db` and
 * open nested transactions with `inTransaction` (libs/db), which joins it.
 */
export class RequestWrite {
  #root: Kysely<any>;
  #trx: ControlledTransaction<any> | undefined;
  #claim: { tenantId: string; key: string; fingerprint: string } | undefined;
  #suspended = false;

  constructor(root: Kysely<any>) {
    this.#root = root;
  }

  /** Where the handler reads and writes. */
  get db(): Kysely<any> {
    return this.#trx ?? this.#root;
  }

  /** Whether a keyed write is in progress (its transaction open). */
  get open(): boolean {
    return this.#trx !== undefined;
  }

  /**
   * Starts a keyed write: takes the key's lock (a concurrent repeat waits for this one's commit),
   * then returns the recorded answer of an earlier commit of the same request, or undefined to go
   * on. The same key with another request is 422 `idempotency_key_reused`.
   */
  async begin(tenantId: string, key: string, fingerprint: string): Promise<RecordedAnswer | undefined> {
    const trx = await this.#root.startTransaction().execute();
    try {
      await LOCK_KEY.execute(trx, [tenantId, key]);
      const recorded = (await RECORDED_ANSWER.execute(trx, [tenantId, key])).rows[0];
      if (recorded) {
        await trx.rollback().execute();
        if (recorded.fingerprint !== fingerprint)
          throw new AppError('idempotency_key_reused', 'This Idempotency-Key was used with a different request (method, path or body)');
        return { status: recorded.status, body: recorded.body, headers: recorded.headers };
      }
    } catch (error) {
      // The original error is the answer (a failed rollback on a dead connection would hide it).
      if (!trx.isRolledBack && !trx.isCommitted)
        await trx
          .rollback()
          .execute()
          .catch(() => undefined);
      throw error;
    }
    this.#trx = trx;
    this.#claim = { tenantId, key, fingerprint };
    return undefined;
  }

  /** Ends a keyed write with its answer: a success is recorded and committed with the write; anything else rolls back. */
  async finish(status: number, body: string, headers: Record<string, string | undefined>): Promise<void> {
    const trx = this.#trx;
    const claim = this.#claim;
    if (!trx || !claim) return;
    this.#trx = undefined;
    if (status >= 300) {
      await trx.rollback().execute();
      return;
    }
    try {
      const kept = Object.fromEntries(RECORDED_HEADERS.flatMap((name) => (headers[name] ? [[name, headers[name]]] : [])));
      await RECORD_ANSWER.execute(trx, [claim.tenantId, claim.key, claim.fingerprint, status, body, JSON.stringify(kept)]);
      await trx.commit().execute();
    } catch (error) {
      if (!trx.isRolledBack && !trx.isCommitted)
        await trx
          .rollback()
          .execute()
          .catch(() => undefined);
      throw error;
    }
  }

  /**
   * Pauses a keyed write for slow work that needs no database (an upload streamed from the client
   * into storage): its transaction rolls back, so meanwhile it holds neither a pooled connection
   * nor the key's lock. `resume` takes them up again. No-op for a write without a key.
   */
  async suspend(): Promise<void> {
    if (!this.#trx) return;
    await this.abandon();
    this.#suspended = true;
  }

  /**
   * Takes a suspended keyed write up again (lock, new transaction). Returns the answer a repeat
   * of the key recorded meanwhile: the caller answers with it and undoes its own side effects.
   */
  async resume(): Promise<RecordedAnswer | undefined> {
    const claim = this.#claim;
    if (!this.#suspended || !claim) return undefined;
    this.#suspended = false;
    return this.begin(claim.tenantId, claim.key, claim.fingerprint);
  }

  /**
   * Rolls back a keyed write that did not finish (an error, an early answer). Never throws: it runs
   * after the response (nobody awaits it), and a rollback on a connection the database already cut
   * (a PostgreSQL restart) fails although the server has rolled the transaction back itself.
   */
  async abandon(): Promise<void> {
    const trx = this.#trx;
    this.#trx = undefined;
    if (trx && !trx.isRolledBack && !trx.isCommitted)
      await trx
        .rollback()
        .execute()
        .catch(() => undefined);
  }
}

/** The recorded answer as a Response, marked as a replay. */
export function replayAnswer(recorded: RecordedAnswer): Response {
  const headers = new Headers(recorded.headers);
  headers.set('idempotent-replayed', 'true');
  return new Response(recorded.body === '' ? null : recorded.body, { status: recorded.status, headers });
}

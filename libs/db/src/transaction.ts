import { type Kysely, sql, type Transaction } from 'kysely';

let savepoints = 0;

/**
 * Runs `fn` in a transaction. When `db` already is one (a keyed write's, contract §21), `fn`
 * joins it under a savepoint: a failure inside rolls back only `fn`'s part, so a caller that
 * catches it (a unique violation turned into a retry) still has a usable transaction.
 */
export async function inTransaction<DB, T>(db: Kysely<DB>, fn: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  if (!db.isTransaction) return db.transaction().execute(fn);
  const savepoint = sql.raw(`nested_${++savepoints}`);
  await sql`savepoint ${savepoint}`.execute(db);
  try {
    const result = await fn(db as Transaction<DB>);
    await sql`release savepoint ${savepoint}`.execute(db);
    return result;
  } catch (error) {
    await sql`rollback to savepoint ${savepoint}`.execute(db).catch(() => undefined);
    throw error;
  }
}

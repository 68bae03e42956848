import { inTransaction, isForeignKeyViolation, isUniqueViolation } from '@crm/db';
import { AppError, type ErrorDetail } from '@crm/http';
import type { Kysely } from 'kysely';
import type { CatalogDatabase } from '../db/database.ts';

type Db = Kysely<CatalogDatabase>;

/** A 409 conflict naming every conflicting field. */
export function conflictError(details: ErrorDetail[]): AppError {
  return new AppError('conflict', `Already in use: ${details.map((d) => `${d.field} ${d.message}`).join('; ')}`, details);
}

/** Whether a write failed on a unique key another transaction took after the checks (a race). */
export function isRaceViolation(error: unknown): boolean {
  return isUniqueViolation(error, 'products_tenant_reference') || isUniqueViolation(error, 'product_rates_tenant_sku');
}

/** What a failed write answers: a unique violation that slipped past the checks (a race) is a 409; other errors pass. */
export function writeError(error: unknown): unknown {
  if (isUniqueViolation(error, 'products_tenant_reference'))
    return new AppError('conflict', 'A product with this reference already exists');
  if (isUniqueViolation(error, 'product_rates_tenant_sku'))
    return new AppError('conflict', 'A rate sku is already used by another product');
  if (isForeignKeyViolation(error)) return new AppError('conflict', 'The product category was deleted meanwhile; retry');
  return error;
}

/**
 * Runs a product write in a transaction (a savepoint when `db` is a keyed request's transaction,
 * so a failure leaves that one usable); a unique violation that slipped past the checks (a race)
 * becomes 409.
 */
export async function inProductTransaction<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  try {
    return await inTransaction(db, work);
  } catch (error) {
    throw writeError(error);
  }
}

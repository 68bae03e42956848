import { isForeignKeyViolation, isUniqueViolation } from '@crm/db';
import { AppError, type ErrorDetail } from '@crm/http';
import type { Kysely } from 'kysely';
import type { CatalogDatabase } from '../db/database.ts';

type Db = Kysely<CatalogDatabase>;

/** A 409 conflict naming every conflicting field. */
export function conflictError(details: ErrorDetail[]): AppError {
  return new AppError('conflict', `Already in use: ${details.map((d) => `${d.field} ${d.message}`).join('; ')}`, details);
}

/** Runs a write in a transaction; a unique violation that slipped past the checks (a race) becomes 409. */
export async function inTransaction<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  try {
    return await db.transaction().execute(work);
  } catch (error) {
    if (isUniqueViolation(error, 'products_tenant_reference'))
      throw new AppError('conflict', 'A product with this reference already exists');
    if (isUniqueViolation(error, 'product_rates_tenant_sku'))
      throw new AppError('conflict', 'A rate sku is already used by another product');
    if (isForeignKeyViolation(error)) throw new AppError('conflict', 'The product category was deleted meanwhile; retry');
    throw error;
  }
}

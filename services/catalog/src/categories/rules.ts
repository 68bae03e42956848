import { type ErrorDetail, isPlainObject, MAX_INT, type RuleCheck } from '@crm/http';
import type { Kysely } from 'kysely';
import type { CatalogDatabase } from '../db/database.ts';
import { findCategoryById, isSelfOrDescendant } from './repo.ts';

type Db = Kysely<CatalogDatabase>;

const isId = (value: unknown): value is number => Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_INT;

/** A raw path id (`'7'`) as a number, or undefined when it names no category. */
export function pathId(raw: string | undefined): number | undefined {
  const id = raw !== undefined && /^[0-9]{1,10}$/.test(raw) ? Number(raw) : 0;
  return isId(id) ? id : undefined;
}

/**
 * The database rules of a category body (the one implementation, used by the route on a schema
 * failure and by the service on the typed body): `parent_id` names a category of this account
 * and, when `movingId` is given, is neither that category nor one of its descendants.
 * Tolerates malformed input: a `parent_id` the schema refuses is left to the schema.
 */
export async function parentErrors(db: Db, tenantId: string, body: unknown, movingId?: number): Promise<ErrorDetail[]> {
  const parentId = isPlainObject(body) ? body.parent_id : undefined;
  if (!isId(parentId)) return [];
  if (!(await findCategoryById(db, tenantId, parentId)))
    return [{ field: 'parent_id', message: 'must be the id of a product category of this account' }];
  if (movingId !== undefined && (await isSelfOrDescendant(db, tenantId, movingId, parentId)))
    return [{ field: 'parent_id', message: 'must not be the category itself or one of its descendants' }];
  return [];
}

/** Rules of `POST /product-categories`, reported with the schema's failures. */
export const createRules =
  (db: Db): RuleCheck =>
  (body, { tenantId }) =>
    parentErrors(db, tenantId, body);

/** Rules of `PUT|PATCH /product-categories/{id}`, reported with the schema's failures. */
export const updateRules =
  (db: Db): RuleCheck =>
  (body, { tenantId, params }) =>
    parentErrors(db, tenantId, body, pathId(params.id));

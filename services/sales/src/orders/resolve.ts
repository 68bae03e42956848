import { type ErrorDetail, MAX_INT } from '@crm/http';
import type { Kysely } from 'kysely';
import { resolveContactIdentifier } from '../contacts/identifier.ts';
import type { SalesDatabase } from '../db/database.ts';
import { findUserByEmail } from '../users/repo.ts';
import { existingOpportunityIds } from './repo.ts';

type Db = Kysely<SalesDatabase>;

export interface OrderParties {
  enterpriseId: number;
  userId: number;
}

const text = (value: unknown) => (typeof value === 'string' && value.length > 0 ? value : undefined);

/**
 * Resolves `enterprise_identifier` (contact identifier rule) and `user_email` (account user)
 * of a create request; each one that does not resolve adds an error on its own field. Values
 * that are not non-empty strings are left to the schema (and resolve to nothing).
 */
export async function resolveOrderParties(
  db: Db,
  tenantId: string,
  body: { enterprise_identifier?: unknown; user_email?: unknown },
  prefix: string,
  errors: ErrorDetail[],
): Promise<OrderParties | undefined> {
  const identifier = text(body.enterprise_identifier);
  const email = text(body.user_email);
  const [enterpriseId, user] = await Promise.all([
    identifier === undefined ? undefined : resolveContactIdentifier(db, tenantId, identifier),
    email === undefined ? undefined : findUserByEmail(db, tenantId, email),
  ]);
  if (identifier !== undefined && enterpriseId === undefined)
    errors.push({ field: `${prefix}enterprise_identifier`, message: 'does not match any contact' });
  if (email !== undefined && !user) errors.push({ field: `${prefix}user_email`, message: 'is not a user of the account' });
  return enterpriseId !== undefined && user ? { enterpriseId, userId: user.id } : undefined;
}

/**
 * Adds an error when `opportunity_id` is an id (1..2147483647) that is not an opportunity of the
 * tenant. Anything else (absent, null, out of range, not an integer) is the schema's to judge.
 */
export async function checkOpportunity(db: Db, tenantId: string, value: unknown, prefix: string, errors: ErrorDetail[]): Promise<void> {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_INT) return;
  const existing = await existingOpportunityIds(db, tenantId, [value]);
  if (!existing.has(value)) errors.push({ field: `${prefix}opportunity_id`, message: 'is not an opportunity of the account' });
}

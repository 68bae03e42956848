import type { ErrorDetail } from '@crm/http';
import type { Kysely } from 'kysely';
import { resolveContactIdentifier } from '../contacts/identifier.ts';
import type { SalesDatabase } from '../db/database.ts';
import { findUserByEmail } from '../users/repo.ts';
import { existingOpportunityIds } from './repo.ts';

type Db = Kysely<SalesDatabase>;

const EXTRA_FIELDS_MAX_BYTES = 16 * 1024;

export interface OrderParties {
  enterpriseId: number;
  userId: number;
}

/**
 * Resolves `enterprise_identifier` (contact identifier rule) and `user_email` (account user)
 * of a create request; each one that does not resolve adds an error on its own field.
 */
export async function resolveOrderParties(
  db: Db,
  tenantId: string,
  body: { enterprise_identifier: string; user_email: string },
  prefix: string,
  errors: ErrorDetail[],
): Promise<OrderParties | undefined> {
  const [enterpriseId, user] = await Promise.all([
    resolveContactIdentifier(db, tenantId, body.enterprise_identifier),
    findUserByEmail(db, tenantId, body.user_email),
  ]);
  if (enterpriseId === undefined) errors.push({ field: `${prefix}enterprise_identifier`, message: 'does not match any contact' });
  if (!user) errors.push({ field: `${prefix}user_email`, message: 'is not a user of the account' });
  return enterpriseId !== undefined && user ? { enterpriseId, userId: user.id } : undefined;
}

/** Adds an error when `opportunity_id` is given but is not an opportunity of the tenant. */
export async function checkOpportunity(
  db: Db,
  tenantId: string,
  opportunityId: number | null | undefined,
  prefix: string,
  errors: ErrorDetail[],
): Promise<void> {
  if (opportunityId === undefined || opportunityId === null) return;
  const existing = await existingOpportunityIds(db, tenantId, [opportunityId]);
  if (!existing.has(opportunityId)) errors.push({ field: `${prefix}opportunity_id`, message: 'is not an opportunity of the account' });
}

/** Adds an error when `extra_fields` serialises to more than 16 KB (contract §17). */
export function checkExtraFieldsSize(extra: Record<string, unknown> | null | undefined, prefix: string, errors: ErrorDetail[]): void {
  if (extra === undefined || extra === null) return;
  if (new TextEncoder().encode(JSON.stringify(extra)).length > EXTRA_FIELDS_MAX_BYTES)
    errors.push({ field: `${prefix}extra_fields`, message: 'must be at most 16 KB of JSON' });
}

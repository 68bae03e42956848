import type { ErrorDetail } from '@crm/http';
import type { Kysely } from 'kysely';
import { resolveContactIdentifier } from '../contacts/identifier.ts';
import { extraFieldsErrors, isPlainObject } from '../contacts/validation.ts';
import type { SalesDatabase } from '../db/database.ts';
import { findUsersByEmails } from '../users/repo.ts';

type Db = Kysely<SalesDatabase>;

/** An opportunity body to check, with the prefix of its field paths (`''` or `data[3].`). */
export interface OpportunityItem {
  body: unknown;
  prefix: string;
}

export interface OpportunityRuleResult {
  details: ErrorDetail[];
  /** The resolved contact id of each item's `enterprise_identifier` (undefined when absent or unknown). */
  enterpriseIds: (number | undefined)[];
  /** Lower-cased e-mail → user id for every known `user_email`. */
  userIds: Map<string, number>;
}

/** Whether a `YYYY-MM-DD` string names a real calendar day (2026-02-30 does not). */
function isCalendarDate(value: string): boolean {
  const date = new Date(`${value}T00:00:00.000Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

/**
 * Rules a schema cannot express: `enterprise_identifier` must designate a contact of the
 * tenant (identifier rule), `user_email` an account user, `close_date` a real day,
 * `extra_fields` ≤ 16 KB. Malformed parts are skipped; the schema reports them.
 */
export async function opportunityRuleErrors(db: Db, tenantId: string, items: OpportunityItem[]): Promise<OpportunityRuleResult> {
  const bodies = items.map((item) => (isPlainObject(item.body) ? item.body : {}));
  const emails = bodies.map((b) => b.user_email).filter((e): e is string => typeof e === 'string');
  const [enterpriseIds, users] = await Promise.all([
    Promise.all(
      bodies.map((b) =>
        typeof b.enterprise_identifier === 'string' && b.enterprise_identifier !== ''
          ? resolveContactIdentifier(db, tenantId, b.enterprise_identifier)
          : undefined,
      ),
    ),
    findUsersByEmails(db, tenantId, [...new Set(emails)]),
  ]);
  const userIds = new Map(users.map((u) => [u.email.toLowerCase(), u.id]));
  const details: ErrorDetail[] = [];
  bodies.forEach((body, index) => {
    const prefix = (items[index] as OpportunityItem).prefix;
    if (typeof body.enterprise_identifier === 'string' && body.enterprise_identifier !== '' && enterpriseIds[index] === undefined)
      details.push({ field: `${prefix}enterprise_identifier`, message: 'does not designate a contact of this account' });
    if (typeof body.user_email === 'string' && !userIds.has(body.user_email.toLowerCase()))
      details.push({ field: `${prefix}user_email`, message: 'is not the e-mail of a user of this account' });
    if (typeof body.close_date === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(body.close_date) && !isCalendarDate(body.close_date))
      details.push({ field: `${prefix}close_date`, message: 'must be a real calendar date (YYYY-MM-DD)' });
    details.push(...extraFieldsErrors(body.extra_fields, `${prefix}extra_fields`));
  });
  return { details, enterpriseIds, userIds };
}

import { type ErrorDetail, isPlainObject } from '@crm/http';
import type { Kysely } from 'kysely';
import { resolveContactIdentifier } from '../contacts/identifier.ts';
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

/**
 * Rules a schema cannot express: `enterprise_identifier` must designate a contact of the
 * tenant (identifier rule), `user_email` an account user. Malformed parts are skipped; the
 * schema reports them.
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
  });
  return { details, enterpriseIds, userIds };
}

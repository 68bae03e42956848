import { type ErrorDetail, isPlainObject } from '@crm/http';
import type { Kysely } from 'kysely';
import { unknownContactTypes } from '../contact-types/repo.ts';
import type { SalesDatabase } from '../db/database.ts';
import { findUsersByEmails } from '../users/repo.ts';

type Db = Kysely<SalesDatabase>;

/** A contact body to check, with the prefix of its field paths (`''` or `data[3].`). */
export interface ContactItem {
  body: unknown;
  prefix: string;
}

export interface ContactRuleResult {
  details: ErrorDetail[];
  /** Lower-cased e-mail → user id, for every known user e-mail in the items. */
  userIds: Map<string, number>;
}

const givenString = (value: unknown): value is string => typeof value === 'string';

/**
 * The rules a schema cannot express, over one or many contact bodies at once (two queries in
 * all): `type` must be a contact type of the tenant, every `users[i]` an account user's e-mail.
 * Malformed parts are skipped; the schema reports them.
 */
export async function contactRuleErrors(db: Db, tenantId: string, items: ContactItem[]): Promise<ContactRuleResult> {
  const bodies = items.map((item) => (isPlainObject(item.body) ? item.body : {}));
  const types = bodies.map((b) => b.type).filter(givenString);
  const emails = bodies.flatMap((b) => (Array.isArray(b.users) ? b.users.filter(givenString) : []));
  const [unknownTypes, users] = await Promise.all([
    unknownContactTypes(db, tenantId, [...new Set(types)]),
    findUsersByEmails(db, tenantId, [...new Set(emails)]),
  ]);
  const userIds = new Map(users.map((u) => [u.email.toLowerCase(), u.id]));
  const details: ErrorDetail[] = [];
  bodies.forEach((body, index) => {
    const prefix = (items[index] as ContactItem).prefix;
    if (givenString(body.type) && unknownTypes.has(body.type))
      details.push({ field: `${prefix}type`, message: 'is not a contact type of this account (see GET /contacts/types)' });
    if (Array.isArray(body.users))
      body.users.forEach((email, i) => {
        if (givenString(email) && !userIds.has(email.toLowerCase()))
          details.push({ field: `${prefix}users[${i}]`, message: 'is not the e-mail of a user of this account' });
      });
  });
  return { details, userIds };
}

/** The user ids of a request's `users` e-mails, de-duplicated, in the given order. */
export function userIdsOf(emails: string[], userIds: Map<string, number>): number[] {
  return [...new Set(emails.map((email) => userIds.get(email.toLowerCase()) as number))];
}

// Batch upsert of contacts (contract §23): each item is matched on its e-mail, cif or name; a
// match is updated with PUT semantics, no match is created; all or nothing, one event per item.
import { createHash } from 'node:crypto';
import type { Contact } from '@crm/contracts';
import { inTransaction } from '@crm/db';
import { writeEvents } from '@crm/events';
import { AppError, throwIfInvalid } from '@crm/http';
import type { Kysely } from 'kysely';
import type { SalesDatabase } from '../db/database.ts';
import type { ContactCreate, ContactUpsert } from './model.ts';
import { findContactMatches, lockContactRows, lockKeys, type MatchProperty } from './repo.ts';
import { loadContacts, writeContactChanges, writeNewContacts } from './service.ts';
import { distinctKeys, matchKeys, upsertRuleErrors } from './upsert-rules.ts';

type Db = Kysely<SalesDatabase>;

/** How often the matches are looked up again when a single write moved them under the upsert. */
const MATCH_ATTEMPTS = 3;

export interface ContactUpsertResult {
  data: Contact[];
  created: boolean[];
}

/** The advisory lock keys of a batch's match values, sorted (a hash collision only makes two writes queue). */
function matchLockKeys(tenantId: string, property: MatchProperty, keys: string[]): bigint[] {
  const locks = keys.map((key) =>
    createHash('sha256').update(`sales.contacts\u0000${tenantId}\u0000${property}\u0000${key}`).digest().readBigInt64BE(0),
  );
  return [...new Set(locks)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

const sameMatches = (a: Map<string, number>, b: Map<string, number>) => a.size === b.size && [...a].every(([key, id]) => b.get(key) === id);

/**
 * The matched contacts, locked for the transaction. A single PUT or DELETE may move a match
 * between the lookup and the lock (rename, delete), so the lookup is repeated under the locks
 * until it is stable.
 */
async function lockMatches(trx: Db, tenantId: string, property: MatchProperty, keys: string[]): Promise<Map<string, number>> {
  for (let attempt = 1; attempt <= MATCH_ATTEMPTS; attempt += 1) {
    const found = await findContactMatches(trx, tenantId, property, keys);
    await lockContactRows(trx, tenantId, [...new Set(found.values())]);
    const again = await findContactMatches(trx, tenantId, property, keys);
    if (sameMatches(found, again)) return again;
  }
  throw new AppError('conflict', 'The contacts this upsert matches kept changing while it ran; retry');
}

/**
 * Upserts up to 100 contacts in one transaction, in request order. Two upserts naming the same
 * new value cannot both create it: each takes a transaction-scoped advisory lock per match
 * value first, so the second waits, then finds the first one's contact and updates it.
 */
export async function upsertContacts(db: Db, tenantId: string, body: ContactUpsert): Promise<ContactUpsertResult> {
  const { id_property: property, data: items } = body;
  const { keys } = matchKeys(property, items);
  return inTransaction(db, async (trx) => {
    await lockKeys(trx, matchLockKeys(tenantId, property, distinctKeys(keys)));
    const matches = await lockMatches(trx, tenantId, property, distinctKeys(keys));
    const { details, userIds } = await upsertRuleErrors(trx, tenantId, body, matches);
    throwIfInvalid(details);
    const targets = keys.map((key) => matches.get(key as string));
    // The rules made sure every unmatched item is a full create body.
    const creates = items.filter((_, i) => targets[i] === undefined) as ContactCreate[];
    const newIds = (await writeNewContacts(trx, tenantId, creates, userIds)).values();
    const ids: number[] = [];
    for (const [i, item] of items.entries()) {
      const target = targets[i];
      if (target === undefined) ids.push(newIds.next().value as number);
      else {
        await writeContactChanges(trx, tenantId, target, item, userIds);
        ids.push(target);
      }
    }
    const data = await loadContacts(trx, tenantId, ids);
    const created = targets.map((target) => target === undefined);
    await writeEvents(
      trx,
      data.map((contact, i) => ({
        tenantId,
        type: created[i] ? ('contact.created' as const) : ('contact.updated' as const),
        data: contact,
      })),
    );
    return { data, created };
  });
}

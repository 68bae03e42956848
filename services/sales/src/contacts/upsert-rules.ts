// The rules of a contacts batch upsert (contract §23) that a schema cannot express: every item
// names its match value, no two items name the same one, and an item that matches no contact
// is a full create body. One implementation, tolerant of any JSON: the route runs it beside a
// failing schema (one 422), the service under its locks.
import { type ErrorDetail, isPlainObject } from '@crm/http';
import type { Kysely } from 'kysely';
import type { SalesDatabase } from '../db/database.ts';
import { findContactMatches, type MatchProperty } from './repo.ts';
import { contactRuleErrors } from './rules.ts';

type Db = Kysely<SalesDatabase>;

/** The properties a contacts upsert can match on. */
export const MATCH_PROPERTIES = ['email', 'cif', 'name'] as const satisfies readonly MatchProperty[];

/** Most items a batch takes; a longer one is reported by the schema alone (no lookups for it). */
const MAX_ITEMS = 100;

const isMatchProperty = (value: unknown): value is MatchProperty => MATCH_PROPERTIES.includes(value as MatchProperty);

/** What an item's value is compared as: e-mails case-insensitively, cif and name exactly. */
export function matchKey(property: MatchProperty, value: string): string {
  return property === 'email' ? value.toLowerCase() : value;
}

/**
 * Each item's match key (undefined when it has none, a malformed one the schema reports, or one
 * an earlier item has) and the 422 details: a missing value on `data[i].<property>`, a repeated
 * one on the later item.
 */
export function matchKeys(property: MatchProperty, items: unknown[]): { keys: (string | undefined)[]; details: ErrorDetail[] } {
  const details: ErrorDetail[] = [];
  const firstIndex = new Map<string, number>();
  const keys = items.map((item, i) => {
    if (!isPlainObject(item)) return undefined;
    const value = item[property];
    const field = `data[${i}].${property}`;
    if (value === undefined || value === null || value === '') {
      details.push({ field, message: `is required: this upsert matches items on ${property}` });
      return undefined;
    }
    if (typeof value !== 'string') return undefined;
    const key = matchKey(property, value);
    const first = firstIndex.get(key);
    if (first === undefined) {
      firstIndex.set(key, i);
      return key;
    }
    details.push({
      field,
      message: `repeats data[${first}].${property}${property === 'email' ? ' (e-mails compare case-insensitively)' : ''}; each item must match a different contact`,
    });
    return undefined;
  });
  return { keys, details };
}

/** The distinct match keys of a batch. */
export const distinctKeys = (keys: (string | undefined)[]): string[] => [...new Set(keys.filter((k): k is string => k !== undefined))];

function createDetails(property: MatchProperty, items: unknown[], keys: (string | undefined)[], matches: Map<string, number>) {
  return items.flatMap((item, i) => {
    const key = keys[i];
    if (!isPlainObject(item) || key === undefined || matches.has(key)) return [];
    return (['name', 'type'] as const)
      .filter((field) => item[field] === undefined)
      .map((field) => ({ field: `data[${i}].${field}`, message: `is required: no contact has this ${property}, so the item creates one` }));
  });
}

/**
 * Every rule failure of an upsert body: the contact rules of each item (`type`, `users[i]`, as
 * the single routes), missing and repeated match values, and create fields of unmatched items.
 * `matches` are the service's locked matches; without them (beside a schema failure) they are looked up.
 */
export async function upsertRuleErrors(
  db: Db,
  tenantId: string,
  body: unknown,
  matches?: Map<string, number>,
): Promise<{ details: ErrorDetail[]; userIds: Map<string, number> }> {
  const items = isPlainObject(body) && Array.isArray(body.data) ? body.data : [];
  if (items.length > MAX_ITEMS) return { details: [], userIds: new Map() };
  const contactRules = await contactRuleErrors(
    db,
    tenantId,
    items.map((item, i) => ({ body: item, prefix: `data[${i}].` })),
  );
  const property = isPlainObject(body) ? body.id_property : undefined;
  if (!isMatchProperty(property)) return contactRules;
  const { keys, details } = matchKeys(property, items);
  const found = matches ?? (await findContactMatches(db, tenantId, property, distinctKeys(keys)));
  return { details: [...contactRules.details, ...details, ...createDetails(property, items, keys, found)], userIds: contactRules.userIds };
}

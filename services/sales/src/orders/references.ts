import { type Kysely, sql } from 'kysely';
import type { SalesDatabase } from '../db/database.ts';

const GENERATED = /^ORD-(\d{6,15})$/;

/** The generated reference for sequence number `n`: `ORD-` + at least 6 zero-padded digits. */
export function formatOrderReference(n: number): string {
  return `ORD-${String(n).padStart(6, '0')}`;
}

/**
 * Issues the tenant's next order reference. The counter row is updated with a row lock held
 * until the transaction ends, so concurrent creates of one tenant get distinct numbers, and a
 * number is never issued twice (deleting an order does not give its number back).
 */
export async function issueOrderReference(trx: Kysely<SalesDatabase>, tenantId: string): Promise<string> {
  const { rows } = await sql<{ issued: number }>`
    insert into order_reference_counters as c (tenant_id, next_value) values (${tenantId}, 2)
    on conflict (tenant_id) do update set next_value = c.next_value + 1
    returning next_value - 1 as issued`.execute(trx);
  return formatOrderReference(Number(rows[0]?.issued));
}

/**
 * A client-chosen reference that looks like a generated one (`ORD-000042`) moves the tenant's
 * counter past it, so the generator never produces a reference that is already taken. Takes
 * the same row lock as `issueOrderReference`, so it is safe against concurrent generation.
 */
export async function reserveGivenOrderReference(trx: Kysely<SalesDatabase>, tenantId: string, reference: string): Promise<void> {
  const match = GENERATED.exec(reference);
  if (!match) return;
  const n = Number(match[1]);
  if (formatOrderReference(n) !== reference) return; // e.g. ORD-0000042: the generator never writes it
  await sql`
    insert into order_reference_counters as c (tenant_id, next_value) values (${tenantId}, ${n + 1})
    on conflict (tenant_id) do update set next_value = greatest(c.next_value, excluded.next_value)`.execute(trx);
}

import { type ErrorDetail, MAX_AMOUNT } from '@crm/http';
import { type Kysely, sql } from 'kysely';
import type { SalesDatabase } from '../db/database.ts';
import type { PricedLine } from './lines.ts';

/** The priced lines of one order of a write, with the field prefix of that order (`data[3].`). */
export interface OrderToTotal {
  prefix: string;
  lines: PricedLine[];
}

const LINE_RULE = `the line total (price × quantity × (1 − discount/100)) must be at most ${MAX_AMOUNT}`;
const ORDER_RULE = `the order total (Σ price × quantity × (1 − discount/100)) must be at most ${MAX_AMOUNT}`;

/**
 * The line and order totals of a write, checked against 999999999999.99 before anything is
 * written (contract §19). They are computed by PostgreSQL in `numeric`, exactly as the stored
 * total is (`refreshOrderTotal`), in one statement for every line of every order of the write.
 * A line whose own total is too large is named (`products[i].quantity`, or `.price` when only
 * the price was given); otherwise, in an order whose total is too large, the line that takes
 * the running total past the bound.
 */
export async function totalErrors(db: Kysely<SalesDatabase>, orders: OrderToTotal[]): Promise<ErrorDetail[]> {
  const rows = orders.flatMap((order, o) => order.lines.map((priced) => ({ o, priced })));
  if (rows.length === 0) return [];
  const { rows: over } = await sql<{ o: number; k: number; line_over: boolean }>`
    select o, k, line_over from (
      select o, k,
        round(price * quantity * (100 - discount) / 100, 2) > ${MAX_AMOUNT}::numeric as line_over,
        round(sum(price * quantity * (100 - discount) / 100) over (partition by o order by k), 2) > ${MAX_AMOUNT}::numeric as running_over
      from unnest(
        ${rows.map((r) => r.o)}::int[], ${rows.map((_, k) => k)}::int[],
        ${rows.map((r) => r.priced.line.price)}::numeric[], ${rows.map((r) => r.priced.line.quantity)}::numeric[],
        ${rows.map((r) => r.priced.line.discount)}::numeric[]
      ) as l(o, k, price, quantity, discount)
    ) totals
    where line_over or running_over
    order by k`.execute(db);
  const errors: ErrorDetail[] = [];
  const named = new Set<number>();
  for (const { o, k, line_over } of over) {
    const { priced } = rows[k] as (typeof rows)[number];
    const field = `${orders[o]?.prefix ?? ''}products[${priced.index}].${priced.blame}`;
    if (line_over) errors.push({ field, message: LINE_RULE });
    else if (!named.has(o)) errors.push({ field, message: ORDER_RULE });
    named.add(o);
  }
  return errors;
}

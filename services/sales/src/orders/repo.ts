import { inIdOrder, type ListRequest, type PageOfIds, preparedStatement, readPageIds, type SortType, tenantRowsByIds } from '@crm/db';
import { type Insertable, type Kysely, type Selectable, sql } from 'kysely';
import pg from 'pg';
import type { OrderLinesTable, OrderStatesTable, OrdersTable, SalesDatabase } from '../db/database.ts';

type Db = Kysely<SalesDatabase>;

export type OrderRow = Selectable<OrdersTable>;
export type OrderLineRow = Selectable<OrderLinesTable>;
export type OrderStateRow = Selectable<OrderStatesTable>;

/** An order row with its lines (by position) and state history (oldest first). */
export interface StoredOrder {
  order: OrderRow;
  lines: OrderLineRow[];
  states: OrderStateRow[];
}

/** A line ready to store: a priced snapshot of the catalog product. Decimals are exact strings. */
export interface NewOrderLine {
  product_id: number;
  reference: string;
  name: string;
  rate_sku: string | null;
  cost: string;
  price: string;
  discount: string;
  quantity: string;
  comment: string | null;
  description: string | null;
}

export type NewOrder = Omit<Insertable<OrdersTable>, 'id' | 'total' | 'created_at' | 'updated_at'>;

export interface OrderChanges {
  opportunity_id?: number | null;
  date_limit?: string;
  state?: number;
  comments?: string | null;
  extra_fields?: string | null;
}

export interface OrderFilters {
  enterprise_id?: number;
  state?: number;
  opportunity_id?: number;
}

/** Inserts an order row and returns its id. */
export async function insertOrder(trx: Db, order: NewOrder): Promise<number> {
  const row = await trx.insertInto('orders').values(order).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** Replaces all lines of an order with `lines` (in the given order). */
export async function replaceOrderLines(trx: Db, orderId: number, lines: NewOrderLine[]): Promise<void> {
  await trx.deleteFrom('order_lines').where('order_id', '=', orderId).execute();
  if (lines.length === 0) return;
  await trx
    .insertInto('order_lines')
    .values(lines.map((line, position) => ({ ...line, order_id: orderId, position })))
    .execute();
}

/**
 * The stored total recomputed from the lines in exact `numeric` arithmetic:
 * Σ price × quantity × (100 − discount) / 100, rounded to 2 decimals. $1: the order's id. A named
 * prepared statement: every order write runs it (73–77 → 23 µs of PostgreSQL CPU,
 * loadtest/statement-cost.ts).
 */
export const REFRESH_ORDER_TOTAL = preparedStatement<{ total: string }>(
  `update orders set total = (
    select coalesce(round(sum(price * quantity * (100 - discount) / 100), 2), 0)
    from order_lines where order_id = $1
  ) where id = $1
  returning total`,
);

/** Recomputes the order's stored total (`REFRESH_ORDER_TOTAL`); returns it as a string. */
export async function refreshOrderTotal(trx: Db, orderId: number): Promise<string> {
  const { rows } = await REFRESH_ORDER_TOTAL.execute(trx, [orderId]);
  return rows[0]?.total as string;
}

/** Appends one entry to an order's state history. */
export async function appendOrderState(trx: Db, orderId: number, state: number, amount: string): Promise<void> {
  await trx.insertInto('order_states').values({ order_id: orderId, state, amount }).execute();
}

/** Applies changed columns to an order and bumps `updated_at`. */
export async function updateOrder(trx: Db, orderId: number, changes: OrderChanges): Promise<void> {
  await trx
    .updateTable('orders')
    .set({ ...changes, updated_at: sql<Date>`now()` })
    .where('id', '=', orderId)
    .execute();
}

/** Deletes an order (its lines and states go with it). */
export async function deleteOrder(trx: Db, orderId: number): Promise<void> {
  await trx.deleteFrom('orders').where('id', '=', orderId).execute();
}

/** The tenant's order with this reference, or undefined; `lock` takes a row lock for an update. */
export function findOrderRow(db: Db, tenantId: string, reference: string, lock = false) {
  let query = db.selectFrom('orders').selectAll().where('tenant_id', '=', tenantId).where('reference', '=', reference);
  if (lock) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** The columns of orders, order_lines and order_states, named (a prepared statement's result must not change with the table). */
const ORDER_COLUMNS =
  'id, tenant_id, reference, enterprise_id, user_id, opportunity_id, date_limit, state, comments, extra_fields, total, created_at, updated_at';
const LINE_COLUMNS = 'id, order_id, position, product_id, reference, name, rate_sku, cost, price, discount, quantity, comment, description';
const STATE_COLUMNS = 'id, order_id, state, amount, created_at';

/**
 * The tenant's order with this reference, its lines (by position) and its state history (oldest
 * first) in ONE named prepared statement (`GET /v1/orders/{reference}`): one round trip instead
 * of the order's row and then its lines and states, each of the three planned on every call. The
 * lines and states come as JSON objects with their columns; decimals as text, as a numeric column
 * reads, and a state's time as timestamptz text, turned into the Date pg makes of that column (so
 * the answer, and its ETag, is the one every other read of the order gives).
 */
export const ORDER_BY_REFERENCE = preparedStatement<
  OrderRow & { lines: OrderLineRow[]; states: (Omit<OrderStateRow, 'created_at'> & { created_at: string })[] }
>(
  `select o.${ORDER_COLUMNS.split(', ').join(', o.')},
    coalesce((select json_agg(json_build_object('id', l.id, 'order_id', l.order_id, 'position', l.position,
      'product_id', l.product_id, 'reference', l.reference, 'name', l.name, 'rate_sku', l.rate_sku, 'cost', l.cost::text,
      'price', l.price::text, 'discount', l.discount::text, 'quantity', l.quantity::text, 'comment', l.comment,
      'description', l.description) order by l.position) from order_lines l where l.order_id = o.id), '[]') as lines,
    coalesce((select json_agg(json_build_object('id', s.id, 'order_id', s.order_id, 'state', s.state, 'amount', s.amount::text,
      'created_at', s.created_at::text) order by s.id) from order_states s where s.order_id = o.id), '[]') as states
  from orders o
  where o.tenant_id = $1 and o.reference = $2`,
);

/** pg's parser of a timestamptz column's text. */
const parseTimestamptz = pg.types.getTypeParser(1184, 'text') as (text: string) => Date;

/** The tenant's order with this reference, its lines and its states (`ORDER_BY_REFERENCE`), or undefined. */
export async function findStoredOrder(db: Db, tenantId: string, reference: string): Promise<StoredOrder | undefined> {
  const { rows } = await ORDER_BY_REFERENCE.execute(db, [tenantId, reference]);
  const row = rows[0];
  if (!row) return undefined;
  const { lines, states, ...order } = row;
  return { order, lines, states: states.map((state) => ({ ...state, created_at: parseTimestamptz(state.created_at) })) };
}

/**
 * The lines and the states of these orders (every list page and write answer), each a named
 * prepared statement whose generic plan is kept: the ids come through a scalar subquery, so a
 * custom plan is costed like the generic one. Sent as IN lists, each was planned on every call
 * (32 µs of planning against 9–11 of execution).
 */
export const LINES_BY_ORDERS = preparedStatement<OrderLineRow>(
  `select ${LINE_COLUMNS} from order_lines where order_id = any((select $1::integer[])::integer[]) order by order_id, position`,
);
export const STATES_BY_ORDERS = preparedStatement<OrderStateRow>(
  `select ${STATE_COLUMNS} from order_states where order_id = any((select $1::integer[])::integer[]) order by order_id, id`,
);

/**
 * The tenant's orders with these ids, in no particular order (a list page, a write's answer): a
 * named prepared statement whose generic plan is kept (`tenantRowsByIds`).
 */
export const ORDERS_BY_IDS = preparedStatement<OrderRow>(tenantRowsByIds('orders', ORDER_COLUMNS, 'o'));

/** Orders with their lines and states, in the order of `rows`. Three queries, whatever the count. */
export async function withLinesAndStates(db: Db, rows: OrderRow[]): Promise<StoredOrder[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [{ rows: lines }, { rows: states }] = await Promise.all([LINES_BY_ORDERS.execute(db, [ids]), STATES_BY_ORDERS.execute(db, [ids])]);
  const linesOf = groupByOrder(lines);
  const statesOf = groupByOrder(states);
  return rows.map((order) => ({ order, lines: linesOf.get(order.id) ?? [], states: statesOf.get(order.id) ?? [] }));
}

/**
 * The tenant's orders with these ids, with their lines and states, in the order of `ids` (ids
 * it has not are left out): a list page, and a write's answer and event inside its transaction.
 * Three named prepared statements (`ORDERS_BY_IDS`, then `LINES_BY_ORDERS` and `STATES_BY_ORDERS`).
 */
export async function loadOrdersById(db: Db, tenantId: string, ids: number[]): Promise<StoredOrder[]> {
  if (ids.length === 0) return [];
  const { rows } = await ORDERS_BY_IDS.execute(db, [tenantId, ids]);
  return withLinesAndStates(db, inIdOrder(rows, ids));
}

/** The sortable fields of the order list and their column types (cursors cast their keys back with them). */
export const ORDER_SORTS = {
  id: 'integer',
  reference: 'text',
  date_limit: 'date',
  state: 'integer',
  created_at: 'timestamptz',
  updated_at: 'timestamptz',
} as const satisfies Record<string, SortType>;

/**
 * One page of the tenant's orders (contract §4 page mode, §22 cursor mode) with their lines and
 * states. The page's ids are walked on a `(tenant_id, field, id)` index (0031); only those
 * orders are read in full.
 */
export async function listOrders(
  db: Db,
  tenantId: string,
  filters: OrderFilters,
  request: ListRequest,
): Promise<{ page: PageOfIds; orders: StoredOrder[] }> {
  let query = db.selectFrom('orders').where('orders.tenant_id', '=', tenantId);
  if (filters.enterprise_id !== undefined) query = query.where('orders.enterprise_id', '=', filters.enterprise_id);
  if (filters.state !== undefined) query = query.where('orders.state', '=', filters.state);
  if (filters.opportunity_id !== undefined) query = query.where('orders.opportunity_id', '=', filters.opportunity_id);
  if (request.updatedSince) query = query.where('orders.updated_at', '>=', request.updatedSince);
  const page = await readPageIds(query, 'orders', request.window);
  return { page, orders: await loadOrdersById(db, tenantId, page.ids) };
}

/** Which of these opportunity ids exist in the tenant. */
export async function existingOpportunityIds(db: Db, tenantId: string, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('opportunities').select('id').where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}

function groupByOrder<T extends { order_id: number }>(items: T[]): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const item of items) {
    const group = groups.get(item.order_id);
    if (group) group.push(item);
    else groups.set(item.order_id, [item]);
  }
  return groups;
}

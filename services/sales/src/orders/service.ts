import type { Order } from '@crm/contracts';
import { inTransaction, isUniqueViolation } from '@crm/db';
import { writeEvents } from '@crm/events';
import { AppError, assertIfMatch, type InternalClient, notFound, validationError } from '@crm/http';
import type { Kysely } from 'kysely';
import type { SalesDatabase } from '../db/database.ts';
import type { CallContext } from './lines.ts';
import type { OrderCreate, OrderUpdate } from './model.ts';
import { presentOrder } from './present.ts';
import { issueOrderReference, reserveGivenOrderReference } from './references.ts';
import * as repo from './repo.ts';
import { type CheckedOrder, checkOrders, singleOrder } from './rules.ts';

type Db = Kysely<SalesDatabase>;

export interface OrdersDeps {
  db: Db;
  catalog: InternalClient;
}

interface ResolvedCreate {
  order: Omit<repo.NewOrder, 'reference'> & { reference?: string };
  lines: repo.NewOrderLine[];
}

function resolvedCreate(ctx: CallContext, body: OrderCreate, { parties, lines }: CheckedOrder): ResolvedCreate {
  if (!parties) throw new Error('order rules passed without resolving the parties');
  return {
    order: {
      tenant_id: ctx.tenantId,
      reference: body.reference,
      enterprise_id: parties.enterpriseId,
      user_id: parties.userId,
      opportunity_id: body.opportunity_id ?? null,
      date_limit: body.date_limit,
      state: body.state,
      comments: body.comments ?? null,
      extra_fields: body.extra_fields == null ? null : JSON.stringify(body.extra_fields),
    },
    lines,
  };
}

/** Inserts one resolved order with its lines and first state entry; returns its id. */
async function insertResolved(trx: Db, tenantId: string, { order, lines }: ResolvedCreate): Promise<number> {
  let reference = order.reference;
  if (reference === undefined) reference = await issueOrderReference(trx, tenantId);
  else await reserveGivenOrderReference(trx, tenantId, reference);
  const id = await repo.insertOrder(trx, { ...order, reference });
  await repo.replaceOrderLines(trx, id, lines);
  const total = await repo.refreshOrderTotal(trx, id);
  await repo.appendOrderState(trx, id, order.state, total);
  return id;
}

function conflictOnDuplicateReference(error: unknown): never {
  if (isUniqueViolation(error, 'orders_tenant_reference'))
    throw new AppError('conflict', 'An order with this reference already exists', [{ field: 'reference', message: 'is already taken' }]);
  throw error;
}

/**
 * Creates orders all-or-nothing: the order rules run over every order first (one catalog lookup
 * for every line, every failing field reported at once, `prefixOf(i)` naming the item, e.g.
 * `data[3].`, totals bounded), so a refused write touches nothing, not even the reference
 * counter; then one transaction writes the orders, their lines, states and `order.created` events.
 */
export async function createOrders(
  deps: OrdersDeps,
  ctx: CallContext,
  bodies: OrderCreate[],
  prefixOf: (i: number) => string,
): Promise<Order[]> {
  const items = bodies.map((item, i) => ({ item, prefix: prefixOf(i) }));
  const { errors, orders: checked } = await checkOrders(deps, ctx, items, { parties: true });
  if (errors.length > 0) throw validationError(errors);
  const resolved = bodies.map((body, i) => resolvedCreate(ctx, body, checked[i] as CheckedOrder));
  return inTransaction(deps.db, async (trx) => {
    const ids: number[] = [];
    for (const item of resolved) ids.push(await insertResolved(trx, ctx.tenantId, item));
    const orders = (await repo.loadOrdersById(trx, ctx.tenantId, ids)).map(presentOrder);
    await writeEvents(
      trx,
      orders.map((data) => ({ tenantId: ctx.tenantId, type: 'order.created' as const, data })),
    );
    return orders;
  }).catch(conflictOnDuplicateReference);
}

/** The replacement lines of an update (undefined when `products` is absent), or one 422 naming every failing field. */
async function validateUpdate(deps: OrdersDeps, ctx: CallContext, body: OrderUpdate) {
  const { errors, orders } = await checkOrders(deps, ctx, singleOrder(body), { parties: false });
  if (errors.length > 0) throw validationError(errors);
  return body.products === undefined ? undefined : orders[0]?.lines;
}

/**
 * Locks the order's row until the transaction ends (every write of an order, its lines or its
 * states takes this lock first) and checks `If-Match` (contract §24) against the order exactly
 * as the API presents it, lines and states included: a concurrent writer with the same ETag
 * waits here, then sees the new version and gets 412 before it writes anything. 404 when absent.
 */
async function lockOrder(trx: Db, tenantId: string, reference: string, ifMatch: string | undefined): Promise<repo.OrderRow> {
  const current = await repo.findOrderRow(trx, tenantId, reference, true);
  if (!current) throw notFound('Order');
  if (ifMatch !== undefined) {
    const [stored] = await repo.withLinesAndStates(trx, [current]);
    assertIfMatch(ifMatch, presentOrder(stored as repo.StoredOrder));
  }
  return current;
}

/**
 * Partial update of an order. `products` replaces every line. A changed `state` appends a
 * state entry (amount = the new total) and an `order.state_changed` event next to `order.updated`.
 * With `ifMatch`, only when it matches the current ETag (else 412: no row, state or event written).
 */
export async function updateOrder(
  deps: OrdersDeps,
  ctx: CallContext,
  reference: string,
  body: OrderUpdate,
  ifMatch?: string,
): Promise<Order> {
  if (!(await repo.findOrderRow(deps.db, ctx.tenantId, reference))) throw notFound('Order');
  const lines = await validateUpdate(deps, ctx, body);
  return inTransaction(deps.db, async (trx) => {
    const current = await lockOrder(trx, ctx.tenantId, reference, ifMatch);
    const { products: _lines, extra_fields, ...fields } = body;
    const changes: repo.OrderChanges = { ...fields };
    if (extra_fields !== undefined) changes.extra_fields = extra_fields === null ? null : JSON.stringify(extra_fields);
    await repo.updateOrder(trx, current.id, changes);
    let total = current.total;
    if (lines) {
      await repo.replaceOrderLines(trx, current.id, lines);
      total = await repo.refreshOrderTotal(trx, current.id);
    }
    const stateChanged = body.state !== undefined && body.state !== current.state;
    if (stateChanged) await repo.appendOrderState(trx, current.id, body.state as number, total);
    const [stored] = await repo.loadOrdersById(trx, ctx.tenantId, [current.id]);
    const order = presentOrder(stored as repo.StoredOrder);
    await writeEvents(trx, [
      { tenantId: ctx.tenantId, type: 'order.updated', data: order },
      ...(stateChanged
        ? [{ tenantId: ctx.tenantId, type: 'order.state_changed' as const, data: { ...order, previous_state: current.state } }]
        : []),
    ]);
    return order;
  });
}

/** Deletes an order and writes `order.deleted` ({ id, reference }) in the same transaction; `ifMatch` as for updates. */
export async function deleteOrderByReference(deps: OrdersDeps, tenantId: string, reference: string, ifMatch?: string): Promise<void> {
  await inTransaction(deps.db, async (trx) => {
    const current = await lockOrder(trx, tenantId, reference, ifMatch);
    await repo.deleteOrder(trx, current.id);
    await writeEvents(trx, [{ tenantId, type: 'order.deleted', data: { id: current.id, reference: current.reference } }]);
  });
}

/** The tenant's order with this reference, or 404. */
export async function getOrder(db: Db, tenantId: string, reference: string): Promise<Order> {
  const stored = await repo.findStoredOrder(db, tenantId, reference);
  if (!stored) throw notFound('Order');
  return presentOrder(stored);
}

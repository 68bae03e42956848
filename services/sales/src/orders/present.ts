import type { Order } from '@crm/contracts';
import type { OrderLineRow, StoredOrder } from './repo.ts';

const iso = (value: Date | string) => new Date(value).toISOString();

function presentLine(line: OrderLineRow) {
  return {
    id: line.product_id,
    reference: line.reference,
    name: line.name,
    pivot: {
      cost: Number(line.cost),
      price: Number(line.price),
      discount: Number(line.discount),
      quantity: Number(line.quantity),
      comment: line.comment,
      description: line.description,
      rate_sku: line.rate_sku,
    },
  };
}

/** The Order resource as the API returns it (and as events carry it). */
export function presentOrder({ order, lines, states }: StoredOrder): Order {
  return {
    id: order.id,
    reference: order.reference,
    enterprise_id: order.enterprise_id,
    user_id: order.user_id,
    opportunity_id: order.opportunity_id,
    date_limit: order.date_limit,
    state: order.state,
    comments: order.comments,
    extra_fields: order.extra_fields,
    total: Number(order.total),
    states: states.map((s) => ({ id: s.id, state: s.state, amount: Number(s.amount), created_at: iso(s.created_at) })),
    products: lines.map(presentLine),
    created_at: iso(order.created_at),
    updated_at: iso(order.updated_at),
  };
}

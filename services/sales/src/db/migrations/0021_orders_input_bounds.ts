import type { Migration } from '@crm/db';
import { sql } from 'kysely';

// Contract §19 in the database: orders, lines and states hold only what the API accepts, so no
// stored order can make a read or a list fail. Frozen: the bounds are written out, not imported.
//
// Repair, before the constraints:
// - Orders holding money or ids outside the bounds are DELETED (lines and states cascade), each
//   with an `order.deleted` event ({ id, reference }) in the outbox for subscribers. Most were
//   written by requests answered 422 (a total past what a JSON number holds: the client was told
//   nothing was stored, and every read of them failed); the others carry amounts no request can
//   produce any more, and there is no truthful amount to replace them with.
// - Other fields are clamped: a negative state → 0, an opportunity id < 1 → null, a date_limit
//   outside 0001-01-01..9999-12-31 → the nearest bound, an extra_fields that is not an object → null.

const MONEY = (column: string) => sql.raw(`(${column} between 0 and 999999999999.99)`);
const LINE_TOTAL = sql.raw('round(price * quantity * (100 - discount) / 100, 2)');
const LINE_OK = sql`(${MONEY('cost')} and ${MONEY('price')} and discount between 0 and 100
  and quantity > 0 and quantity <= 1000000000 and ${LINE_TOTAL} <= 999999999999.99 and product_id >= 1)`;
const PARTIES_OK = sql.raw('(enterprise_id >= 1 and user_id >= 1)');
const STATE_OK = MONEY('amount');

export const m0021OrdersInputBounds: Migration = {
  name: '0021_orders_input_bounds',
  async up(db) {
    await sql`with broken as (
        select id from orders where not (${MONEY('total')} and ${PARTIES_OK})
        union select order_id from order_lines where not ${LINE_OK}
        union select order_id from order_states where not ${STATE_OK}
      ), removed as (
        delete from orders where id in (select id from broken) returning id, tenant_id, reference
      )
      insert into outbox (id, tenant_id, type, payload)
      select 'evt_' || replace(gen_random_uuid()::text, '-', ''), tenant_id, 'order.deleted',
        jsonb_build_object('id', id, 'reference', reference)
      from removed order by id`.execute(db);

    await sql`update orders set state = 0 where state < 0`.execute(db);
    await sql`update order_states set state = 0 where state < 0`.execute(db);
    await sql`update orders set opportunity_id = null where opportunity_id < 1`.execute(db);
    await sql`update orders set date_limit = greatest(least(date_limit, date '9999-12-31'), date '0001-01-01')
      where date_limit not between date '0001-01-01' and date '9999-12-31'`.execute(db);
    await sql`update orders set extra_fields = null where jsonb_typeof(extra_fields) <> 'object'`.execute(db);

    await sql`alter table orders
      add constraint orders_total_range check ${MONEY('total')},
      add constraint orders_party_ids_range check ${PARTIES_OK},
      add constraint orders_state_range check (state >= 0),
      add constraint orders_opportunity_id_range check (opportunity_id >= 1),
      add constraint orders_date_limit_range check (date_limit between date '0001-01-01' and date '9999-12-31'),
      add constraint orders_extra_fields_object check (jsonb_typeof(extra_fields) = 'object')`.execute(db);
    await sql`alter table order_lines add constraint order_lines_bounds check ${LINE_OK}`.execute(db);
    await sql`alter table order_states
      add constraint order_states_amount_range check ${STATE_OK},
      add constraint order_states_state_range check (state >= 0)`.execute(db);
  },
};

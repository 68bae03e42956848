import type { Migration } from '@crm/db';
import { sql } from 'kysely';

/**
 * GCRA for k requests of one bucket in one call: grants as many of them as the bucket allows
 * (in arrival order) and advances the theoretical arrival time by one interval per grant.
 * The row lock serialises replicas; the database clock is the only clock.
 */
export const m0004GcraConsume: Migration = {
  name: '0004_gcra_consume',
  async up(db) {
    await sql`create function gcra_consume(p_bucket text, p_interval float8, p_period float8, p_k integer)
      returns table (tat_ms float8, granted integer, now_ms float8)
      language plpgsql as $$
      declare
        v_now float8 := extract(epoch from now()) * 1000;
        v_base float8;
        v_granted integer;
      begin
        insert into rate_limits as r (bucket, tat_ms, allowed) values (p_bucket, v_now, true)
          on conflict (bucket) do nothing;
        select greatest(r.tat_ms, v_now) into v_base from rate_limits r where r.bucket = p_bucket for update;
        -- 0.001 ms of slack so that e.g. 7 × (60000 / 7) still fits in the period despite float rounding.
        v_granted := least(p_k, greatest(0, floor((v_now + p_period + 0.001 - v_base) / p_interval)))::integer;
        update rate_limits r set tat_ms = v_base + v_granted * p_interval, allowed = v_granted > 0 where r.bucket = p_bucket;
        return query select v_base + v_granted * p_interval, v_granted, v_now;
      end $$`.execute(db);
  },
};

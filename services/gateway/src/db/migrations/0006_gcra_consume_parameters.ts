import type { Migration } from '@crm/db';
import { sql } from 'kysely';

/**
 * `gcra_consume` with every constant of the algorithm passed in (the emission interval, the
 * period and the float slack, all in milliseconds), so they are written once, in the gateway's
 * code (`rate-limit/gcra.ts`), and the SQL only applies them: for k requests of one bucket, grant
 * as many as the bucket admits (in arrival order) and advance the theoretical arrival time by one
 * interval per grant. It returns the bucket's arrival time before the grants (`base_ms`, never
 * earlier than now), how many were granted and the database clock, from which the caller derives
 * each request's verdict. The row lock serialises replicas; the database clock is the only clock.
 *
 * The four-argument function of 0004 is left in place: during a rolling update the replicas of
 * the previous release still call it. A later migration drops it.
 */
export const m0006GcraConsumeParameters: Migration = {
  name: '0006_gcra_consume_parameters',
  async up(db) {
    await sql`create or replace function gcra_consume(p_bucket text, p_k integer, p_interval_ms float8, p_period_ms float8, p_slack_ms float8)
      returns table (base_ms float8, granted integer, now_ms float8)
      language plpgsql as $$
      declare
        v_now float8 := extract(epoch from now()) * 1000;
        v_base float8;
        v_granted integer;
      begin
        insert into rate_limits as r (bucket, tat_ms, allowed) values (p_bucket, v_now, true)
          on conflict (bucket) do nothing;
        select greatest(r.tat_ms, v_now) into v_base from rate_limits r where r.bucket = p_bucket for update;
        v_granted := least(p_k, greatest(0, floor((v_now + p_period_ms + p_slack_ms - v_base) / p_interval_ms)))::integer;
        update rate_limits r set tat_ms = v_base + v_granted * p_interval_ms, allowed = v_granted > 0 where r.bucket = p_bucket;
        return query select v_base, v_granted, v_now;
      end $$`.execute(db);
  },
};

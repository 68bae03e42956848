import type { Migration } from '@crm/db';
import { sql } from 'kysely';

/**
 * The grant replicas of 1.2.0–1.2.4 send (their `CONSUME_SQL`), verbatim: `tat_ms` as one float
 * sum. Kept to test and measure this release beside them.
 */
export const PREVIOUS_CONSUME_SQL = `insert into rate_limits as r (bucket, tat_ms, allowed, base_ms, granted)
select $1::text, f.now_ms + f.granted * $3::float8, f.granted > 0, f.now_ms, f.granted
  from (select n.now_ms, least($2::integer, greatest(0, floor((n.now_ms + $4::float8 + $5::float8 - n.now_ms) / $3::float8)))::integer as granted
          from (select (extract(epoch from now()) * 1000)::float8 as now_ms) n) f
on conflict (bucket) do update set
  base_ms = greatest(r.tat_ms, excluded.base_ms),
  granted = least($2::integer, greatest(0, floor((excluded.base_ms + $4::float8 + $5::float8 - greatest(r.tat_ms, excluded.base_ms)) / $3::float8)))::integer,
  tat_ms = greatest(r.tat_ms, excluded.base_ms)
    + least($2::integer, greatest(0, floor((excluded.base_ms + $4::float8 + $5::float8 - greatest(r.tat_ms, excluded.base_ms)) / $3::float8)))::integer * $3::float8,
  allowed = least($2::integer, greatest(0, floor((excluded.base_ms + $4::float8 + $5::float8 - greatest(r.tat_ms, excluded.base_ms)) / $3::float8))) > 0
returning r.base_ms, r.granted, (extract(epoch from now()) * 1000)::float8 as now_ms`;

/**
 * A bucket's theoretical arrival time kept as an anchor instant plus a whole number of emission
 * intervals (rate-limit/gcra.ts `Bucket`): `anchor_ms` and `intervals` (a whole number kept as
 * float8, exact below 2^53, so the grant's arithmetic needs no casts), both nullable additions
 * to the UNLOGGED table (no rewrite). A grant only adds whole intervals, so what a bucket admits
 * after it is exactly what it admitted before less what it granted; with one float sum
 * (`tat_ms + granted × interval`, rounded to 2^-12 ms near 1.8e12) a bucket whose tat lay within
 * that rounding of an interval boundary lost one request. `tat_ms` is still written, as the float
 * sum of the two, for what reads a bucket as one instant: the purge, a look (OPTIONS) and the
 * statement of the previous release. `allowed` (0002) is no longer kept up to date: nothing reads
 * it, and the previous release's statement still writes it.
 *
 * The limiter's statement (`CONSUME_SQL`) uses a row's anchor and intervals only while they give
 * its `tat_ms` bit for bit; otherwise it anchors the bucket at `tat_ms` (gcra.ts `bucketOf`). So a
 * rolling update from 1.2.x needs nothing more: replicas of the previous release keep sending
 * their statement, which reads and moves `tat_ms` only (and writes `base_ms`/`granted`); the next
 * grant of a new replica sees that `tat_ms` no longer matches and counts from it. Both kinds
 * serialise on the same row lock and count from the same arrival time, so budgets stay shared
 * across the mix. A bucket whose limit changes is re-anchored the same way (its intervals no
 * longer give its `tat_ms`).
 *
 * `gcra_consume(text, integer, float8, float8, float8)` (replicas of 1.1.0) keeps its name,
 * arguments and result columns and applies the same rule, as three statements under the row's
 * lock (those replicas' speed is not this release's concern); its `base_ms` is the bucket's
 * arrival time before the grant, `anchor + intervals × interval` of the bucket it counted from.
 */
export const m0010GcraWholeIntervals: Migration = {
  name: '0010_gcra_whole_intervals',
  async up(db) {
    await sql`alter table rate_limits add column anchor_ms float8, add column intervals float8`.execute(db);
    await sql`create or replace function gcra_consume(p_bucket text, p_k integer, p_interval_ms float8, p_period_ms float8, p_slack_ms float8)
      returns table (base_ms float8, granted integer, now_ms float8)
      language plpgsql as $$
      declare
        v_now float8 := (extract(epoch from now()) * 1000)::float8;
        v_row record;
        v_anchor float8;
        v_intervals float8;
        v_granted float8;
      begin
        insert into rate_limits (bucket, tat_ms, allowed) values (p_bucket, v_now, true) on conflict (bucket) do nothing;
        select r.tat_ms, r.anchor_ms, r.intervals into v_row from rate_limits r where r.bucket = p_bucket for update;
        if v_row.tat_ms > v_now and v_row.tat_ms = v_row.anchor_ms + v_row.intervals * p_interval_ms then
          v_anchor := v_row.anchor_ms;
          v_intervals := v_row.intervals;
        else
          v_anchor := greatest(v_row.tat_ms, v_now);
          v_intervals := 0;
        end if;
        v_granted := least(p_k, greatest(0, floor((v_now + p_period_ms + p_slack_ms - v_anchor) / p_interval_ms - v_intervals)));
        update rate_limits r set anchor_ms = v_anchor, intervals = v_intervals + v_granted, granted = v_granted,
            tat_ms = v_anchor + (v_intervals + v_granted) * p_interval_ms
          where r.bucket = p_bucket;
        return query select v_anchor + v_intervals * p_interval_ms, v_granted::integer, v_now;
      end
      $$`.execute(db);
  },
};

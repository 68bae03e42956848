import type { Migration } from '@crm/db';
import { sql } from 'kysely';

/**
 * The GCRA grant as ONE statement instead of a PL/pgSQL function running three (insert-if-absent,
 * select for update, update): an `insert … on conflict (bucket) do update … returning` on the
 * bucket's row, which PostgreSQL plans once per connection and executes in one pass. The gateway
 * sends it itself as a named prepared statement (`rate-limit/limiter.ts`, `CONSUME_SQL`); the
 * rule is unchanged (rate-limit/gcra.ts `grant`, tested against both bit for bit).
 *
 * `returning` sees only the row as updated, not the arrival time before the grant, so the row
 * also keeps what the last call computed: `base_ms` (the arrival time the grant started from,
 * never earlier than now) and `granted`. Both are nullable additions to the UNLOGGED table: no
 * rewrite.
 *
 * `gcra_consume(text, integer, float8, float8, float8)` (migration 0006) keeps its name,
 * arguments and result columns and now runs the same single statement (PL/pgSQL still: it keeps
 * the statement's plan for the session, where a `language sql` function plans it on every call,
 * measured at twice the cost of the old function in loadtest/ratelimit-store.ts).
 *
 * A rolling update from 1.1.0: the first replica of this release applies the migration (the `alter table` holds the bucket table for the few milliseconds of the migration's
 * transaction; limiter calls of every replica wait that long); replicas still on 1.1.0 keep
 * calling `gcra_consume` and get the same grants from the same row lock as the new replicas'
 * statement, so the budgets stay exact across the mix. The four-argument `gcra_consume` of
 * migration 0004 is dropped: only 1.0.x called it, so a rolling update must start from 1.1.x.
 */
export const m0008GcraConsumeStatement: Migration = {
  name: '0008_gcra_consume_statement',
  async up(db) {
    await sql`alter table rate_limits add column base_ms float8, add column granted integer`.execute(db);
    await sql`create or replace function gcra_consume(p_bucket text, p_k integer, p_interval_ms float8, p_period_ms float8, p_slack_ms float8)
      returns table (base_ms float8, granted integer, now_ms float8)
      language plpgsql as $$
      #variable_conflict use_column
      begin
        return query
        insert into rate_limits as r (bucket, tat_ms, allowed, base_ms, granted)
        select p_bucket, f.now_ms + f.granted * p_interval_ms, f.granted > 0, f.now_ms, f.granted
          from (select n.now_ms, least(p_k, greatest(0, floor((n.now_ms + p_period_ms + p_slack_ms - n.now_ms) / p_interval_ms)))::integer as granted
                  from (select (extract(epoch from now()) * 1000)::float8 as now_ms) n) f
        on conflict (bucket) do update set
          base_ms = greatest(r.tat_ms, excluded.base_ms),
          granted = least(p_k, greatest(0, floor((excluded.base_ms + p_period_ms + p_slack_ms - greatest(r.tat_ms, excluded.base_ms)) / p_interval_ms)))::integer,
          tat_ms = greatest(r.tat_ms, excluded.base_ms)
            + least(p_k, greatest(0, floor((excluded.base_ms + p_period_ms + p_slack_ms - greatest(r.tat_ms, excluded.base_ms)) / p_interval_ms)))::integer * p_interval_ms,
          allowed = least(p_k, greatest(0, floor((excluded.base_ms + p_period_ms + p_slack_ms - greatest(r.tat_ms, excluded.base_ms)) / p_interval_ms))) > 0
        returning r.base_ms, r.granted, (extract(epoch from now()) * 1000)::float8;
      end
      $$`.execute(db);
    await sql`drop function if exists gcra_consume(text, float8, float8, integer)`.execute(db);
  },
};

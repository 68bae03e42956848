import { type Kysely, sql } from 'kysely';

/** One frozen schema change. Migrations never import application code. */
export interface Migration {
  name: string;
  up(db: Kysely<any>): Promise<void>;
}

/**
 * Applies pending migrations of one service's schema in a single transaction, under an
 * advisory lock so several replicas booting at once apply each migration exactly once.
 */
export async function migrate(db: Kysely<any>, schema: string, migrations: Migration[]): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${`migrate:${schema}`}))`.execute(trx);
    await sql`create schema if not exists ${sql.id(schema)}`.execute(trx);
    await sql`create table if not exists ${sql.id(schema, 'schema_migrations')} (
      name text primary key, applied_at timestamptz not null default now())`.execute(trx);
    const { rows } = await sql<{ name: string }>`select name from ${sql.id(schema, 'schema_migrations')}`.execute(trx);
    const done = new Set(rows.map((r) => r.name));
    const applied: string[] = [];
    await sql`set local search_path to ${sql.id(schema)}, public`.execute(trx);
    for (const migration of migrations) {
      if (done.has(migration.name)) continue;
      await migration.up(trx);
      await sql`insert into ${sql.id(schema, 'schema_migrations')} (name) values (${migration.name})`.execute(trx);
      applied.push(migration.name);
    }
    return applied;
  });
}

import { type CompiledQuery, createQueryId, Kysely, PostgresDialect, RawNode } from 'kysely';
import pg from 'pg';

// Counts and bigserial ids fit in a JS number; dates stay as 'YYYY-MM-DD' strings, not local-time Dates.
pg.types.setTypeParser(20, (v) => Number.parseInt(v, 10));
pg.types.setTypeParser(1082, (v) => v);

export interface DbOptions {
  url: string;
  /** The Postgres schema this service owns; it becomes the connection's search_path. */
  schema: string;
  /** Connections in the pool (`DB_POOL_MAX`, default 5; the budget is in deploy/README.md). */
  max?: number;
}

/** Connections per pool when the service does not say (`DB_POOL_MAX`'s default). */
export const DEFAULT_POOL_MAX = 5;

/**
 * pg pool settings for a service's schema, each connection named `crm-<schema>`. A request waiting for a connection gives up after
 * 5 s instead of hanging (the gateway's upstream timeout is longer), and TCP keep-alive notices
 * a database host that vanished without closing its sockets.
 */
export function poolConfig({ url, schema, max = DEFAULT_POOL_MAX }: DbOptions): pg.PoolConfig {
  return {
    Client: PreparingClient,
    connectionString: url,
    max,
    options: `-c search_path=${schema},public`,
    // Names the owner of each connection in pg_stat_activity (and in PostgreSQL's logs with %a).
    application_name: `crm-${schema}`,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 5000,
    keepAlive: true,
  };
}

/** SQL texts sent as named prepared statements: text → statement name. */
const preparedNames = new Map<string, string>();

/** A constant SQL text sent as a named prepared statement; `compile` pairs it with its values. */
export interface PreparedStatement<R> {
  readonly sql: string;
  /** The query to hand to `db.executeQuery`, built without any query building. */
  compile(parameters: readonly unknown[]): CompiledQuery<R>;
  /**
   * Runs it with these values: on the pool itself when `db` is a Kysely instance made by
   * `createDb` (none of the query builder's connection and logging layers: the hot reads), else
   * (a transaction) through `db`.
   */
  execute(db: Kysely<any>, parameters: readonly unknown[]): Promise<{ rows: R[] }>;
}

/** The pool behind each Kysely instance made by createDb. */
const poolOf = new WeakMap<Kysely<any>, pg.Pool>();

/**
 * Marks a constant SQL text as a named prepared statement: each connection of a pool made here
 * parses and plans it once, then only binds and executes it. For a read with several subqueries
 * and many candidate indexes, planning is most of its cost (the contact-by-identifier read: about
 * 0.55 ms of PostgreSQL CPU to plan, 0.07 ms to run). Only for a few constant texts: every
 * connection keeps each one for its life.
 */
export function preparedStatement<R>(text: string): PreparedStatement<R> {
  if (!preparedNames.has(text)) preparedNames.set(text, `crm_prepared_${preparedNames.size + 1}`);
  const name = preparedNames.get(text) as string;
  const query = RawNode.createWithSql(text);
  const compile = (parameters: readonly unknown[]): CompiledQuery<R> => ({ sql: text, query, parameters, queryId: createQueryId() });
  return {
    sql: text,
    compile,
    async execute(db, parameters) {
      const pool = poolOf.get(db);
      if (!pool) return db.executeQuery(compile(parameters));
      statements += 1;
      const { rows } = await pool.query({ name, text, values: parameters as unknown[] });
      return { rows };
    },
  };
}

/**
 * The SQL of a read of a tenant's rows by ids for a named prepared statement: `$1` the tenant,
 * `$2` the ids (an array of `idType`), each id ONE lookup on the table's `(tenant_id, id)` index
 * (`LATERAL … OFFSET 0`), each id once, in no particular order; the rows under `alias`.
 *
 * Why this shape: PostgreSQL runs a prepared statement with a generic plan, made without the
 * values, once it judges that plan no dearer than the custom plans of its first five executions.
 * Written as `tenant_id = $1 and id = any($2)`, a generic plan can walk the tenant's index and
 * filter on `id`, reading every row of the tenant; given the array itself, the planner counts its
 * elements for a custom plan but assumes 10 for the generic one, so it judges the generic plan of
 * a one-id read ten times dearer and plans every call again. Through a scalar subquery
 * (`unnest((select $2::integer[]))`) the planner sees no values: both plans assume 10 ids, and
 * the generic one, one index lookup per id, is kept from the sixth execution on.
 */
export function tenantRowsByIds(table: string, columns: string, alias: string, idType: 'integer' | 'bigint' = 'integer'): string {
  return `select ${alias}.* from (select distinct unnest((select $2::${idType}[])) as id) as wanted
  cross join lateral (select ${columns} from ${table} where tenant_id = $1 and id = wanted.id offset 0) as ${alias}`;
}

/**
 * The planner settings of a queue's statements: the pending rows of a partial index
 * (`outbox_pending` of the outbox relays, `delivery_tasks_due` of webhook delivery), walked in
 * order one entry at a time, and the rows a batch takes, found by their keys.
 *
 * - Never through a bitmap. Every row that leaves the queue leaves a dead entry in that index
 *   until VACUUM removes it. A bitmap scan, which the planner chose from its estimates, reads the
 *   heap page of each such entry on every scan (10,800 published events: 654 pages and 3.3 ms per
 *   relay batch; 8,000 delivered tasks: 124 pages per claim, growing with every row, measured on a
 *   PostgreSQL without autovacuum). A plain index scan marks them dead as it passes
 *   (kill_prior_tuple), and the next scans skip them: 31 pages and 0.04 ms for the same outbox.
 * - Never a sequential scan. These statements are planned once per connection, when it first runs
 *   them, and the plan is kept until VACUUM or ANALYZE updates the table's statistics. Planned
 *   while the table was empty or nearly so (a new database, a service's first batch), a
 *   sequential scan looks cheapest, and the kept plan then reads every row the table holds on
 *   every batch, published ones included: the relay's marking (`seq = any($1)`) read 833 pages
 *   over 20,000 rows instead of a few through the primary key, and under the bench's writes on a
 *   PostgreSQL without autovacuum cost 0.3 → 1.6 ms per batch as the outbox grew, against 0.04 ms.
 */
export const QUEUE_SCAN_SETTINGS: readonly string[] = ['enable_bitmapscan = off', 'enable_seqscan = off'];

/** `set local <setting>` for each setting, as statements of one simple-protocol query (`a; b`). */
export function setLocal(settings: readonly string[]): string {
  return settings.map((setting) => `set local ${setting}`).join('; ');
}

/** Statement texts run by `queryWithSettings(…, { prepared: true })`: text → the name it is PREPAREd under. */
const sqlPreparedNames = new Map<string, string>();
/** The names each connection has PREPAREd (a prepared statement lives as long as its session). */
const sqlPreparedOn = new WeakMap<pg.ClientBase, Set<string>>();

/** The name `preparedOn` PREPAREs this statement text under (for EXPLAIN EXECUTE in tests). */
export function sqlPreparedName(statement: string): string {
  let name = sqlPreparedNames.get(statement);
  if (!name) {
    name = `crm_sql_${sqlPreparedNames.size + 1}`;
    sqlPreparedNames.set(statement, name);
  }
  return name;
}

/**
 * PREPAREs `statement` on this connection the first time it meets it (one round trip), and
 * returns the name to `execute`. The plan of a statement without parameters is made at its first
 * EXECUTE, under the settings of that moment, and kept. `parameterTypes`: the types of `$1…`
 * (`prepare <name>(<types>) as …`). For SELECT, INSERT, UPDATE and DELETE statements (and WITH of
 * them); a distinct text is a distinct prepared statement, so only for a few constant texts.
 */
export async function preparedOn(client: pg.ClientBase, statement: string, parameterTypes: readonly string[] = []): Promise<string> {
  const name = sqlPreparedName(statement);
  const prepared = sqlPreparedOn.get(client) ?? new Set<string>();
  if (!prepared.has(name)) {
    const types = parameterTypes.length > 0 ? `(${parameterTypes.join(', ')})` : '';
    await client.query(`prepare ${name}${types} as ${statement}`);
    prepared.add(name);
    sqlPreparedOn.set(client, prepared);
  }
  return name;
}

/**
 * Runs one statement in a transaction of its own under planner settings (`set local …`), in ONE
 * round trip: `begin; <settings>; <statement>; commit` as a simple-protocol query, so the
 * statement takes no parameters (its values are literals the caller has checked). For a queue's
 * claim whose plan must not depend on the planner's estimates (`QUEUE_SCAN_SETTINGS`).
 *
 * `prepared`: the connection PREPAREs the statement once (`preparedOn`) and then sends
 * `execute <name>` in its place, so PostgreSQL plans it once per connection instead of on every
 * call (the delivery claim: 0.72 → 0.12–0.17 ms of PostgreSQL CPU). Its plan, made at the first
 * EXECUTE, is made under the same settings as every later one (and made again, under them, when
 * a change to a table invalidates it).
 */
export async function queryWithSettings<R>(
  db: Kysely<any>,
  settings: readonly string[],
  statement: string,
  options: { prepared?: boolean } = {},
): Promise<R[]> {
  const pool = poolOf.get(db);
  if (!pool) throw new Error('queryWithSettings needs a database made by createDb');
  statements += 1;
  const client = await pool.connect();
  try {
    const text = options.prepared ? `execute ${await preparedOn(client, statement)}` : statement;
    const results = (await client.query(
      ['begin', setLocal(settings), text, 'commit'].filter(Boolean).join('; '),
    )) as unknown as pg.QueryResult[];
    return (results[settings.length + 1]?.rows ?? []) as R[];
  } catch (error) {
    await client.query('rollback').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** pg's client, sending the texts marked by preparedStatement() as named statements. */
class PreparingClient extends pg.Client {
  override query(config: any, values?: any, callback?: any): any {
    const name = typeof config === 'string' && Array.isArray(values) ? preparedNames.get(config) : undefined;
    return name ? super.query({ name, text: config, values }, callback) : super.query(config, values, callback);
  }
}

let statements = 0;

/** SQL statements sent through every Kysely instance of this process (exposed as `db_queries_total`). */
export function statementCount(): number {
  return statements;
}

/** A Kysely instance on a pg pool whose connections use the service's schema. */
export function createDb<DB>(options: DbOptions): { db: Kysely<DB>; pool: pg.Pool } {
  const pool = new pg.Pool(poolConfig(options));
  pool.on('error', () => {
    // An idle client lost its connection (database restart); the pool replaces it.
  });
  pool.on('connect', (client) => {
    // A client checked out of the pool has no 'error' listener of the pool's: when its connection
    // drops between two statements (a PostgreSQL restart) the unheard event would crash the
    // process. The statement in flight fails on its own and the pool discards the broken client.
    client.on('error', () => {});
  });
  const db = new Kysely<DB>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      if (event.level === 'query') statements += 1;
    },
  });
  poolOf.set(db, pool);
  return { db, pool };
}

/** Creates a database if it does not exist yet (used by the local stack and the test harness). */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (!rowCount) await client.query(`create database "${name.replace(/"/g, '""')}"`);
  } catch (error) {
    // Two processes racing to create the same database: the loser sees a duplicate.
    if (!(error instanceof Error && /already exists|duplicate key/.test(error.message))) throw error;
  } finally {
    await client.end();
  }
}

/** Whether a database error is a unique violation (optionally of one named constraint or index). */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: string; constraint?: string };
  return e?.code === '23505' && (constraint === undefined || e.constraint === constraint);
}

/** Whether a database error is a foreign-key violation. */
export function isForeignKeyViolation(error: unknown): boolean {
  return (error as { code?: string })?.code === '23503';
}

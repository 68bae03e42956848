// The state a refused write must leave untouched (contract §19): every table of the service
// schemas as a content checksum (a row count alone misses a committed update that answered
// 422), the outboxes among them, every sequence, and the run's bucket (objects, bytes and
// unfinished multipart uploads). The gateway's own tables (audit log, idempotency records,
// rate limits) are left out: §19 expects those to change.
import { ListMultipartUploadsCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { s3Client } from '@crm/stack';
import type { Stack } from '@crm/testing';

const SERVICE_SCHEMAS = ['sales', 'catalog', 'documents', 'webhooks'];
/** Columns a background process changes after the answer (the outbox relay marks rows published). */
const VOLATILE_COLUMNS = ['published_at'];

export interface Snapshot {
  tables: Map<string, { rows: number; sum: string }>;
  sequences: Map<string, string>;
  bucket: { objects: number; bytes: number; uploads: number };
}

export interface Change {
  what: string;
  before: string;
  after: string;
  /** An id sequence (serial column) that advanced: a gap in ids, not data left behind. */
  idSequenceOnly?: boolean;
  /** A table background work was seen changing (an event consumer's): the change may not be this request's. */
  background?: boolean;
}

export interface Snapshotter {
  /** Database and bucket as they are now. */
  take(): Promise<Snapshot>;
  /**
   * Waits until background work (outbox relay, event consumers, webhook deliveries) is quiet,
   * and remembers which tables it saw changing while no request was in flight.
   */
  settle(maxMs?: number): Promise<boolean>;
  /** Tables seen changing by themselves (filled by settle). */
  readonly backgroundTables: ReadonlySet<string>;
  /** What changed from one snapshot to the next. */
  diff(before: Snapshot, after: Snapshot): Change[];
  close(): void;
}

/** Reads the run's database and bucket; table and sequence names are discovered once. */
export async function createSnapshotter(stack: Stack): Promise<Snapshotter> {
  const db = await databaseReader(stack);
  const idSequences = await ownedSequences(stack);
  const s3 = s3Client(stack.s3);
  const backgroundTables = new Set<string>();
  return {
    async take() {
      const [state, bucket] = await Promise.all([db.read(), bucketState(s3, stack.bucket)]);
      return { ...state, bucket };
    },
    settle: (maxMs = 3000) => waitQuiet(db, backgroundTables, maxMs),
    backgroundTables,
    diff: (before, after) => diffSnapshots(before, after, idSequences, backgroundTables),
    close: () => s3.destroy(),
  };
}

type DatabaseState = Pick<Snapshot, 'tables' | 'sequences'>;
interface DatabaseReader {
  read(): Promise<DatabaseState>;
  /** Outbox rows not yet published. */
  pendingEvents(): Promise<number>;
}

/** One query for every service table's checksum, one for the sequences, one for unpublished events. */
async function databaseReader(stack: Stack): Promise<DatabaseReader> {
  const { rows } = await stack.sql<{ name: string }>(
    `select format('%I.%I', table_schema, table_name) as name from information_schema.tables
      where table_schema = any($1) and table_type = 'BASE TABLE' and table_name not like '%migration%' order by 1`,
    [SERVICE_SCHEMAS],
  );
  const tables = rows.map((r) => r.name);
  const masked = `array[${VOLATILE_COLUMNS.map((c) => `'${c}'`).join(',')}]::text[]`;
  const contentSql = tables
    .map(
      (t) => `select '${t}' as name, count(*)::int as rows, md5(coalesce(string_agg(r, ',' order by r), '')) as sum
      from (select (to_jsonb(x) - ${masked})::text as r from ${t} x) s`,
    )
    .join('\nunion all\n');
  const outboxes = tables.filter((t) => t.endsWith('.outbox'));
  const pendingSql = outboxes.map((t) => `(select count(*) from ${t} where published_at is null)`).join(' + ') || '0';
  const sequenceSql = `select format('%I.%I', schemaname, sequencename) as name, coalesce(last_value, 0)::text as value
    from pg_sequences where schemaname = any($1)`;
  return {
    async read() {
      const [content, sequences] = await Promise.all([
        stack.sql<{ name: string; rows: number; sum: string }>(contentSql),
        stack.sql<{ name: string; value: string }>(sequenceSql, [SERVICE_SCHEMAS]),
      ]);
      return {
        tables: new Map(content.rows.map((r) => [r.name, { rows: r.rows, sum: r.sum }])),
        sequences: new Map(sequences.rows.map((r) => [r.name, r.value])),
      };
    },
    async pendingEvents() {
      const { rows } = await stack.sql<{ n: string }>(`select ${pendingSql} as n`);
      return Number(rows[0]?.n ?? 0);
    },
  };
}

/** Polls until no event waits in an outbox and no table changed between two reads; notes the tables that did. */
async function waitQuiet(db: DatabaseReader, backgroundTables: Set<string>, maxMs: number): Promise<boolean> {
  const until = Date.now() + maxMs;
  let previous = await db.read();
  while (Date.now() < until) {
    await Bun.sleep(80);
    const [now, pending] = await Promise.all([db.read(), db.pendingEvents()]);
    const moved = [...now.tables].filter(([name, t]) => previous.tables.get(name)?.sum !== t.sum).map(([name]) => name);
    for (const name of moved) backgroundTables.add(name);
    if (moved.length === 0 && pending === 0) return true;
    previous = now;
  }
  return false;
}

/** What differs between two snapshots, one entry per table, sequence or bucket figure. */
function diffSnapshots(before: Snapshot, after: Snapshot, idSequences: Set<string>, backgroundTables: ReadonlySet<string>): Change[] {
  const changes: Change[] = [];
  for (const [name, now] of after.tables) {
    const then = before.tables.get(name);
    if (then?.sum === now.sum) continue;
    const rows = then && then.rows !== now.rows ? `${then.rows} rows` : 'content';
    changes.push({
      what: `table ${name}`,
      before: then ? rows : 'absent',
      after: then && then.rows !== now.rows ? `${now.rows} rows` : 'changed',
      background: backgroundTables.has(name),
    });
  }
  for (const [name, now] of after.sequences) {
    const then = before.sequences.get(name) ?? '0';
    if (then !== now) changes.push({ what: `sequence ${name}`, before: then, after: now, idSequenceOnly: idSequences.has(name) });
  }
  for (const key of ['objects', 'bytes', 'uploads'] as const) {
    if (before.bucket[key] !== after.bucket[key])
      changes.push({ what: `bucket ${key}`, before: String(before.bucket[key]), after: String(after.bucket[key]) });
  }
  return changes;
}

/** Sequences that back a serial or identity column (their advance is an id gap, not state). */
async function ownedSequences(stack: Stack): Promise<Set<string>> {
  const { rows } = await stack.sql<{ name: string }>(
    `select format('%I.%I', n.nspname, s.relname) as name from pg_class s
       join pg_namespace n on n.oid = s.relnamespace
       join pg_depend d on d.objid = s.oid and d.deptype in ('a', 'i')
      where s.relkind = 'S'`,
  );
  return new Set(rows.map((r) => r.name));
}

async function bucketState(s3: S3Client, bucket: string): Promise<Snapshot['bucket']> {
  let objects = 0;
  let bytes = 0;
  let uploads = 0;
  try {
    let token: string | undefined;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
      for (const o of page.Contents ?? []) {
        objects += 1;
        bytes += o.Size ?? 0;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    const pending = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
    uploads = pending.Uploads?.length ?? 0;
  } catch (error) {
    if ((error as Error).name !== 'NoSuchBucket') throw error;
  }
  return { objects, bytes, uploads };
}

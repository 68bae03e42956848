import type { Logger } from '@crm/http';
import type { Insertable, Kysely } from 'kysely';
import type { AuditLogsTable, GatewayDatabase } from '../db/database.ts';
import { insertAuditEntries } from './repo.ts';

export type AuditEntry = Insertable<AuditLogsTable>;

export interface AuditRecorderOptions {
  flushMs: number;
  batchSize: number;
}

/** Query parameters whose values never reach the audit log. */
const SECRET_PARAM = /key|token|secret|password|passwd/i;

/** The query string with the values of secret-looking parameters replaced by `[REDACTED]`; null when empty. */
export function redactQuery(search: string): string | null {
  if (search === '' || search === '?') return null;
  const params = new URLSearchParams(search);
  const parts: string[] = [];
  for (const [name, value] of params) {
    parts.push(`${encodeURIComponent(name)}=${SECRET_PARAM.test(name) ? '[REDACTED]' : encodeURIComponent(value)}`);
  }
  return parts.join('&');
}

const NUL = '\u0000';
const TEXT_FIELDS = [
  'request_id',
  'tenant_id',
  'key_id',
  'method',
  'path',
  'query',
  'client_ip',
  'user_agent',
  'idempotency_key',
  'error_type',
] as const;

/**
 * The entry as PostgreSQL can store it. A `text` value cannot hold U+0000, and one such value
 * fails the whole multi-row insert (everyone's records in the batch), so U+0000 becomes U+FFFD
 * (the replacement character: visibly "a character was here", never confused with real input).
 * Non-strings (an upstream's odd `error.type`) become their JSON text; status and duration stay in
 * the columns' bounds (migration 0005).
 */
export function storableEntry(entry: AuditEntry): AuditEntry {
  const out: AuditEntry = { ...entry };
  for (const field of TEXT_FIELDS) {
    const value: unknown = entry[field];
    if (value === null || value === undefined) continue;
    const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
    out[field] = text.includes(NUL) ? text.replaceAll(NUL, '\uFFFD') : text;
  }
  if (!Number.isInteger(out.status) || out.status < 100 || out.status > 599) out.status = 500;
  if (!Number.isFinite(out.duration_ms) || out.duration_ms < 0) out.duration_ms = 0;
  return out;
}

/** A PostgreSQL data exception (class 22) or integrity violation (class 23): retrying cannot help. */
function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}

/**
 * Collects audit entries in memory and writes them in multi-row inserts, off the request
 * path: every `flushMs`, or sooner once `batchSize` are waiting. `stop()` (SIGTERM, after the
 * server has finished its in-flight requests) writes everything still buffered. A failed
 * write keeps its entries for the next attempt, unless the database refused an entry itself.
 */
export function createAuditRecorder(db: Kysely<GatewayDatabase>, logger: Logger, options: AuditRecorderOptions) {
  let buffer: AuditEntry[] = [];
  let flushing: Promise<void> | undefined;

  async function writeBuffered(): Promise<void> {
    while (buffer.length > 0) {
      const batch = buffer.slice(0, options.batchSize);
      try {
        await insertAuditEntries(db, batch);
        buffer = buffer.slice(batch.length);
      } catch (error) {
        if (isDataError(error) && (await writeOneByOne(batch.length))) continue;
        logger.error('audit write failed; will retry', { error, pending: buffer.length });
        return;
      }
    }
  }

  /**
   * After the database refused a batch for its data: the first `count` entries one at a time,
   * so an entry it cannot store is dropped (and logged) instead of holding back everyone's
   * records forever. False when a write fails for another reason (retried later).
   */
  async function writeOneByOne(count: number): Promise<boolean> {
    for (let i = 0; i < count && buffer.length > 0; i++) {
      const entry = buffer[0] as AuditEntry;
      try {
        await insertAuditEntries(db, [entry]);
      } catch (error) {
        if (!isDataError(error)) return false;
        logger.error('audit entry refused by the database; dropped', { error, request_id: entry.request_id });
      }
      buffer.shift();
    }
    return true;
  }

  function flush(): Promise<void> {
    flushing ??= writeBuffered().finally(() => {
      flushing = undefined;
    });
    return flushing;
  }

  const timer = setInterval(() => void flush(), options.flushMs);

  return {
    /** Queues one entry; never waits for the database. */
    record(entry: AuditEntry): void {
      buffer.push(storableEntry(entry));
      if (buffer.length >= options.batchSize) void flush();
    },
    flush,
    async stop(): Promise<void> {
      clearInterval(timer);
      for (let attempt = 0; attempt < 5 && buffer.length > 0; attempt++) {
        await flush();
        if (buffer.length > 0) await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
      }
      if (buffer.length > 0) logger.error('audit entries lost at shutdown', { lost: buffer.length });
    },
  };
}

export type AuditRecorder = ReturnType<typeof createAuditRecorder>;

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

/**
 * Collects audit entries in memory and writes them in multi-row inserts, off the request
 * path: every `flushMs`, or sooner once `batchSize` are waiting. `stop()` (SIGTERM, after the
 * server has finished its in-flight requests) writes everything still buffered. A failed
 * write keeps its entries for the next attempt.
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
        logger.error('audit write failed; will retry', { error, pending: buffer.length });
        return;
      }
    }
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
      buffer.push(entry);
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

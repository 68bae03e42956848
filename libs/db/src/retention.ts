// One way to run a retention job (issue 16): every owner of data that expires (audit records,
// published outbox rows, events with their deliveries, exactly-once records) deletes it in small
// batches — one short statement each, so no statement holds many row locks or writes a burst of
// WAL — soon after start and then on an interval; a failure is logged and the next run retries.

/** What a retention job needs to log. */
export interface RetentionLog {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

export interface RetentionJob {
  /** What is purged, for the log lines (`audit records`). */
  name: string;
  /** Deletes at most `batchSize` expired rows; returns how many it deleted. */
  deleteBatch: (batchSize: number) => Promise<number>;
  batchSize: number;
  intervalMs: number;
  log: RetentionLog;
}

/** Starts a retention job: batch after batch until one is not full, first within 10 s, then every `intervalMs`. */
export function startRetentionJob(job: RetentionJob) {
  const { name, deleteBatch, batchSize, intervalMs, log } = job;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> = Promise.resolve();

  async function purgeAll(): Promise<void> {
    let purged = 0;
    for (;;) {
      const deleted = await deleteBatch(batchSize);
      purged += deleted;
      if (deleted < batchSize || stopped) break;
    }
    if (purged > 0) log.info(`expired ${name} purged`, { count: purged });
  }

  function schedule(delayMs: number): void {
    timer = setTimeout(() => {
      running = purgeAll()
        .catch((error) => log.warn(`${name} purge failed; retried on the next run`, { error: String(error) }))
        .finally(() => {
          if (!stopped) schedule(intervalMs);
        });
    }, delayMs);
    (timer as { unref?: () => void }).unref?.();
  }

  schedule(Math.min(intervalMs, 10_000));
  return {
    /** Stops scheduling; a run under way ends after its current batch. */
    async stop(): Promise<void> {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await running;
    },
  };
}

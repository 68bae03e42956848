import type { Logger } from '@crm/http';
import type { Kysely } from 'kysely';
import type { WebhooksDatabase } from '../db/database.ts';
import type { TargetPolicy } from '../ssrf/target-guard.ts';
import { sendWebhook } from './http-sender.ts';
import { judgeAttempt, nextRetryDelayMs } from './retry-policy.ts';
import {
  type AttemptRecord,
  type AttemptToRecord,
  type ClaimedTask,
  claimDueTasks,
  isPlainAttempt,
  recordAttempt,
  recordAttempts,
} from './task-queue.ts';
import { buildWebhookRequest } from './webhook-request.ts';

export interface DeliveryWorkerOptions {
  db: Kysely<WebhooksDatabase>;
  logger: Logger;
  targetPolicy: TargetPolicy;
  retryScheduleMs: number[];
  jitter: number;
  timeoutMs: number;
  concurrency: number;
  pollMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Makes one attempt for a claimed task and turns its result into a log record. */
async function attemptDelivery(task: ClaimedTask, options: DeliveryWorkerOptions): Promise<AttemptRecord> {
  const { body, headers } = buildWebhookRequest(task);
  const result = await sendWebhook({ url: task.url, headers, body, timeoutMs: options.timeoutMs, targetPolicy: options.targetPolicy });
  const base = { statusCode: result.statusCode, error: result.error, excerpt: result.excerpt, durationMs: result.durationMs };
  const verdict = judgeAttempt(result);
  if (verdict === 'delivered') return { ...base, status: 'delivered', nextAttemptAt: null };
  if (verdict === 'gone') {
    return {
      ...base,
      status: 'failed',
      nextAttemptAt: null,
      disableReason: 'The endpoint answered 410 Gone; re-enable it with PUT enabled=true',
    };
  }
  const error =
    result.error ??
    (result.statusCode !== null && result.statusCode >= 300 && result.statusCode < 400 ? 'redirects are not followed' : null);
  const delay = nextRetryDelayMs(task.attempts + 1, options.retryScheduleMs, options.jitter, result.retryAfter);
  if (delay === undefined) return { ...base, error, status: 'failed', nextAttemptAt: null };
  return { ...base, error, status: 'pending', nextAttemptAt: new Date(Date.now() + delay) };
}

/**
 * The delivery loop: keeps up to `concurrency` attempts in flight, claiming due tasks as slots
 * free up; idles until `wake()` (new tasks queued locally: right after the ingest's commit) or
 * the poll interval (retries coming due, tasks queued by another replica). A finished attempt
 * starts a claim only when there may be due tasks left unclaimed (the last claim filled every
 * free slot, or tasks were queued while none was free), not one empty claim per attempt.
 */
export function startDeliveryWorker(options: DeliveryWorkerOptions) {
  const { db, logger, concurrency, pollMs } = options;
  const leaseMs = options.timeoutMs * 2 + 30_000;
  let stopped = false;
  let inFlight = 0;
  let wakeUp: (() => void) | undefined;
  let woken = false;
  /** Due tasks may be waiting for a free slot. */
  let backlog = false;
  const wake = () => {
    woken = true;
    wakeUp?.();
  };

  // Finished attempts are logged together, one log statement at a time: those that finish while it
  // runs go in the next one (fewer statements and pool connections under load, no timer). The
  // receiver has its answer already; only the slot waits.
  const toRecord: { entry: AttemptToRecord; settle: (error?: unknown) => void }[] = [];
  let recording = false;
  const recordOne = ({ entry, settle }: (typeof toRecord)[number]) =>
    recordAttempt(db, entry.task, entry.record).then(
      () => settle(),
      (error) => settle(error ?? new Error('attempt not logged')),
    );
  async function flushRecords() {
    if (recording) return;
    recording = true;
    try {
      while (toRecord.length > 0) {
        const taken = toRecord.splice(0, 100);
        const plain = taken.filter((b) => isPlainAttempt(b.entry));
        for (const b of taken) if (!isPlainAttempt(b.entry)) await recordOne(b);
        try {
          await recordAttempts(
            db,
            plain.map((b) => b.entry),
          );
          for (const b of plain) b.settle();
        } catch (error) {
          // One attempt that cannot be logged must not fail the others: each on its own.
          logger.warn('attempt log batch failed; logging each attempt on its own', { count: plain.length, error: String(error) });
          for (const b of plain) await recordOne(b);
        }
      }
    } finally {
      recording = false;
    }
  }
  const record = (entry: AttemptToRecord) =>
    new Promise<void>((resolve, reject) => {
      toRecord.push({ entry, settle: (error) => (error === undefined ? resolve() : reject(error)) });
      void flushRecords();
    });

  /** Attempts made whose log is not written yet. */
  let unrecorded = 0;

  async function deliver(task: ClaimedTask) {
    let attempt: AttemptRecord | undefined;
    try {
      attempt = await attemptDelivery(task, options);
    } catch (error) {
      // The lease expires and the task is attempted again.
      logger.error('delivery attempt failed', { task_id: task.id, event_id: task.event_id, error: String(error) });
    } finally {
      // The slot (a request in flight) is free once the receiver answered; the task's lease keeps
      // it from being claimed again while its log is written.
      inFlight--;
      if (backlog || stopped) wake();
    }
    if (!attempt) return;
    unrecorded++;
    try {
      await record({ task, record: attempt });
    } catch (error) {
      // The lease expires and the task is attempted again.
      logger.error('delivery bookkeeping failed', { task_id: task.id, event_id: task.event_id, error: String(error) });
    } finally {
      unrecorded--;
      if (backlog) wake();
    }
  }

  async function idle() {
    if (woken) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, pollMs);
      wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    wakeUp = undefined;
  }

  async function loop() {
    while (!stopped) {
      const wokenBefore = woken;
      woken = false;
      // At most `concurrency` requests in flight, and at most as many attempts again waiting for their log.
      const free = Math.max(0, Math.min(concurrency - inFlight, 2 * concurrency - inFlight - unrecorded));
      if (free === 0) {
        // Tasks queued while every slot is busy: claimed when an attempt finishes.
        if (wokenBefore) backlog = true;
        await idle();
        continue;
      }
      let claimed: ClaimedTask[];
      try {
        claimed = await claimDueTasks(db, free, leaseMs);
      } catch (error) {
        logger.warn('claiming deliveries failed', { error: String(error) });
        await sleep(1000);
        continue;
      }
      backlog = claimed.length === free;
      for (const task of claimed) {
        inFlight++;
        void deliver(task);
      }
      if (backlog && inFlight < concurrency && inFlight + unrecorded < 2 * concurrency) continue;
      await idle();
    }
  }

  const running = loop();
  return {
    wake,
    /** Stops claiming and waits for in-flight attempts to finish and be recorded. */
    async stop(): Promise<void> {
      stopped = true;
      wake();
      await running;
      // Bounded so SIGTERM exits in time; an unrecorded attempt is retried when its lease ends.
      const deadline = Date.now() + Math.min(options.timeoutMs, 5000);
      while ((inFlight > 0 || unrecorded > 0) && Date.now() < deadline) await sleep(50);
    },
  };
}

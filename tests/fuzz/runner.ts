// Runs one generated case against the stack: snapshot (for writes), request, the checks on the
// answer, the snapshot diff for a refused write, then learning the ids a success created.
import type { FuzzCase } from './cases.ts';
import { answerFindings, CHECK_ANSWERED, CHECK_NOTHING_LEFT } from './checks.ts';
import { collectionCreatedBy, collectionOfParam, PoolRef, type ResourcePool } from './pool.ts';
import type { FuzzReport } from './report.ts';
import { buildRequest, sendRequest, type WireRequest, type WireResponse } from './request.ts';
import type { Snapshot, Snapshotter } from './snapshot.ts';

export interface RunContext {
  gatewayUrl: string;
  apiKey: string;
  pool: ResourcePool;
  snapshots: Snapshotter;
  report: FuzzReport;
  /** Throws when a process of the stack has died (every later request would fail the same way). */
  assertAlive: () => Promise<void>;
}

/** Sends one case and records every check it fails. */
export async function runCase(ctx: RunContext, c: FuzzCase): Promise<void> {
  const { request, realPath } = buildRequest(c, ctx.pool);
  const isWrite = request.method !== 'GET' && request.method !== 'HEAD';
  const before = isWrite ? await timed(ctx, 'snapshot', () => ctx.snapshots.take()) : undefined;
  const started = performance.now();
  const answer = await sendRequest(ctx.gatewayUrl, ctx.apiKey, request);
  const ms = Math.round(performance.now() - started);
  if ('error' in answer) {
    ctx.report.countRequest(c, request, null, ms, answer.error);
    ctx.report.add(c, request, CHECK_ANSWERED, answer.error);
    await ctx.assertAlive();
    if (isWrite) await timed(ctx, 'settle', () => ctx.snapshots.settle());
    return;
  }
  ctx.report.countRequest(c, request, answer.status, ms, answer.text);
  const seen = { status: answer.status, text: answer.text, json: answer.json, requestId: answer.headers.get('x-request-id') };
  for (const finding of answerFindings(c, answer, realPath)) ctx.report.add(c, request, finding.check, finding.detail, seen);
  if (isWrite && answer.status >= 400 && answer.status < 500 && before) await checkRefusedWrite(ctx, c, request, before, seen);
  if (answer.status < 300) learnFrom(c, answer, ctx.pool);
  if (answer.status === 404 && c.inputClass === 'valid' && c.op.method === 'GET') forgetMissing(c, ctx.pool);
  if (isWrite && answer.status < 300) await timed(ctx, 'settle', () => ctx.snapshots.settle());
}

type Seen = { status: number; text: string; json: any; requestId: string | null };

/**
 * A refused write must leave nothing behind. A change only in tables background work was seen
 * changing (event consumers, webhook deliveries) may be a late effect of an earlier success, so
 * it counts only when the same request, sent again once all is quiet, changes them again.
 */
async function checkRefusedWrite(ctx: RunContext, c: FuzzCase, request: WireRequest, before: Snapshot, seen: Seen): Promise<void> {
  const { report, snapshots } = ctx;
  report.totals.refusedWrites += 1;
  const changes = snapshots.diff(before, await timed(ctx, 'snapshot', () => snapshots.take()));
  let left = changes.filter((change) => !change.idSequenceOnly);
  if (changes.length > 0) await timed(ctx, 'settle', () => snapshots.settle());
  if (left.length > 0 && left.every((change) => change.background)) {
    report.totals.confirmationReplays += 1;
    const again = await timed(ctx, 'snapshot', () => snapshots.take());
    const replay = await sendRequest(ctx.gatewayUrl, ctx.apiKey, request);
    const refusedAgain = !('error' in replay) && replay.status >= 400 && replay.status < 500;
    left = refusedAgain
      ? snapshots.diff(again, await timed(ctx, 'snapshot', () => snapshots.take())).filter((ch) => !ch.idSequenceOnly)
      : [];
    if (left.length === 0) report.totals.backgroundChangesNotReproduced += 1;
    await timed(ctx, 'settle', () => snapshots.settle());
  }
  if (left.length > 0) {
    report.totals.refusedWritesLeftBehind += 1;
    report.add(c, request, CHECK_NOTHING_LEFT, left.map((ch) => `${ch.what}: ${ch.before} → ${ch.after}`).join('; '), seen);
  } else if (changes.length > 0 && changes.every((change) => change.idSequenceOnly)) {
    report.totals.refusedWritesIdGapOnly += 1;
  }
}

async function timed<T>(ctx: RunContext, what: 'snapshot' | 'settle', work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    ctx.report.timings[what] += Math.round(performance.now() - started);
  }
}

/** Keeps the pool true: what a success created, listed, changed or deleted. */
function learnFrom(c: FuzzCase, answer: WireResponse, pool: ResourcePool): void {
  const data = answer.json?.data;
  const lastParam = c.op.pathParams.at(-1);
  const collection = lastParam ? collectionOfParam(c.op.path, lastParam.name) : undefined;
  if (c.op.method === 'POST' && answer.status === 201) {
    const into = collectionCreatedBy(c.op.path);
    if (into) for (const item of Array.isArray(data) ? data : [data]) pool.add(into, item);
    return;
  }
  if (c.op.method === 'GET' && Array.isArray(data) && !c.op.path.endsWith('}')) {
    const into = c.op.path.split('/').at(-1) as string;
    for (const item of data.slice(0, 10)) pool.add(into, item);
    return;
  }
  if (!collection || !lastParam) return;
  const value = c.path[lastParam.name];
  const key = value instanceof PoolRef ? String(pool.resolve(value)) : undefined;
  if (c.op.method === 'DELETE' && answer.json?.deleted === true && key !== undefined) pool.remove(collection, key);
  else if (
    (c.op.method === 'PUT' || c.op.method === 'PATCH') &&
    data &&
    typeof data === 'object' &&
    data.id !== undefined &&
    c.op.path.endsWith('}')
  ) {
    if (key !== undefined && lastParam.name === 'reference' && data.reference !== key) pool.remove(collection, key);
    pool.add(collection, data);
  }
}

/** A valid read of a known resource answered 404: the resource is gone (deleted through another path). */
function forgetMissing(c: FuzzCase, pool: ResourcePool): void {
  const last = c.op.pathParams.at(-1);
  const value = last ? c.path[last.name] : undefined;
  if (last && value instanceof PoolRef) pool.remove(collectionOfParam(c.op.path, last.name), String(pool.resolve(value)));
}

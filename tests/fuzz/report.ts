// Collects every violation of a fuzz run (never stopping at the first), groups them by check,
// operation, input class and status, and writes the totals the issue asks for: requests
// tried, 5xx seen, refused writes that left something behind.
import { writeFileSync } from 'node:fs';
import type { FuzzCase } from './cases.ts';
import { replayable, type WireRequest } from './request.ts';

export interface Violation {
  check: string;
  operation: string;
  inputClass: string;
  label: string;
  status: number | null;
  detail: string;
  excerpt: string;
  requestId: string | null;
  request: ReturnType<typeof replayable>;
}

interface Group {
  check: string;
  operation: string;
  inputClass: string;
  status: number | null;
  count: number;
  examples: Violation[];
}

const MAX_GROUPS_SHOWN = 60;

export class FuzzReport {
  readonly totals = {
    requests: 0,
    fiveXX: 0,
    refusedWrites: 0,
    refusedWritesLeftBehind: 0,
    /** Refused writes whose only trace is an advanced id sequence (a gap in ids; reported, not failed). */
    refusedWritesIdGapOnly: 0,
    /** Refused writes whose only change was in background-fed tables and that were sent again to check. */
    confirmationReplays: 0,
    /** …of which the repeat changed nothing: a late effect of earlier work, not counted. */
    backgroundChangesNotReproduced: 0,
    unanswered: 0,
  };
  /** Where the run's time went (ms): requests, snapshots of writes, waiting for background work. */
  readonly timings = { request: 0, snapshot: 0, settle: 0 };
  readonly slowest: { ms: number; operation: string; label: string; status: number | null }[] = [];
  readonly statusCounts: Record<string, number> = {};
  readonly classCounts: Record<string, number> = {};
  readonly violations: Violation[] = [];
  /** One JSON line per request (operation, class, status, time, answer excerpt), written beside the report. */
  readonly requestLog: string[] = [];

  constructor(
    readonly seed: number,
    readonly runs: number,
  ) {}

  /** Counts one request, its status (null: no answer) and how long it took. */
  countRequest(c: FuzzCase, request: WireRequest, status: number | null, ms: number, excerpt = ''): void {
    this.totals.requests += 1;
    this.requestLog.push(
      JSON.stringify({
        op: c.op.name,
        class: c.inputClass,
        label: c.label,
        target: request.target.slice(0, 300),
        status,
        ms,
        answer: excerpt.slice(0, 200),
      }),
    );
    this.timings.request += ms;
    this.slowest.push({ ms, operation: c.op.name, label: c.label, status });
    this.slowest.sort((a, b) => b.ms - a.ms).splice(10);
    if (status === null) this.totals.unanswered += 1;
    else if (status >= 500) this.totals.fiveXX += 1;
    this.statusCounts[String(status)] = (this.statusCounts[String(status)] ?? 0) + 1;
    this.classCounts[c.inputClass] = (this.classCounts[c.inputClass] ?? 0) + 1;
  }

  /** Records one failed check of one request. */
  add(
    c: FuzzCase,
    request: WireRequest,
    check: string,
    detail: string,
    answer?: { status: number; text: string; json: any; requestId: string | null },
  ): void {
    const error = answer?.json?.error;
    const excerpt = error ? `${error.type}: ${error.message}` : (answer?.text ?? '');
    this.violations.push({
      check,
      operation: c.op.name,
      inputClass: c.inputClass,
      label: c.label,
      status: answer?.status ?? null,
      detail,
      excerpt: excerpt.length > 200 ? `${excerpt.slice(0, 200)}…` : excerpt,
      requestId: answer?.requestId ?? null,
      request: replayable(request),
    });
  }

  groups(): Group[] {
    const byKey = new Map<string, Group>();
    for (const v of this.violations) {
      const key = [v.check, v.operation, v.inputClass, v.status].join('|');
      const group = byKey.get(key) ?? {
        check: v.check,
        operation: v.operation,
        inputClass: v.inputClass,
        status: v.status,
        count: 0,
        examples: [],
      };
      group.count += 1;
      if (group.examples.length < 3) group.examples.push(v);
      byKey.set(key, group);
    }
    return [...byKey.values()].sort(
      (a, b) => a.check.localeCompare(b.check) || a.operation.localeCompare(b.operation) || a.inputClass.localeCompare(b.inputClass),
    );
  }

  /** The three figures of the closing note, on one line. */
  totalsLine(): string {
    const t = this.totals;
    const notes = [
      `of ${t.refusedWrites} refused writes`,
      `${t.refusedWritesIdGapOnly} more advanced only an id sequence`,
      `${t.backgroundChangesNotReproduced} background-table changes not reproduced on a repeat`,
    ];
    return `requests tried: ${t.requests} · 5xx seen: ${t.fiveXX} · refused writes that left something behind: ${t.refusedWritesLeftBehind} (${notes.join('; ')}) · unanswered: ${t.unanswered}`;
  }

  /** A grouped, human-readable summary: totals, then one block per group with a replay line. */
  summary(reportPath: string, replayHint: string): string {
    const groups = this.groups();
    const lines = [
      `fuzz seed ${this.seed} · ${replayHint}`,
      this.totalsLine(),
      `violations: ${this.violations.length} in ${groups.length} groups · full report: ${reportPath}`,
    ];
    let check = '';
    for (const g of groups.slice(0, MAX_GROUPS_SHOWN)) {
      if (g.check !== check) {
        check = g.check;
        lines.push(`── ${check} ──`);
      }
      const first = g.examples[0] as Violation;
      lines.push(`  ${g.count}× ${g.operation} · ${g.inputClass} · ${g.status ?? 'no answer'} · ${first.detail}`);
      lines.push(
        `     e.g. ${first.label}${first.excerpt ? ` → ${first.excerpt.replaceAll('\n', ' ').slice(0, 160)}` : ''}${first.requestId ? ` (request ${first.requestId})` : ''}`,
      );
      lines.push(
        `     replay: ${first.request.curl.length > 600 ? `${first.request.curl.slice(0, 600)}… (full line in the report)` : first.request.curl}`,
      );
    }
    if (groups.length > MAX_GROUPS_SHOWN) lines.push(`… ${groups.length - MAX_GROUPS_SHOWN} more groups in ${reportPath}`);
    return lines.join('\n');
  }

  /** Writes totals, counts and every group with its examples as JSON. */
  write(path: string, extra: Record<string, unknown> = {}): void {
    const body = {
      seed: this.seed,
      runs: this.runs,
      totals: this.totals,
      statuses: this.statusCounts,
      classes: this.classCounts,
      timings_ms: this.timings,
      slowest: this.slowest,
      ...extra,
      groups: this.groups(),
    };
    writeFileSync(path, `${JSON.stringify(body, null, 2)}\n`);
    writeFileSync(path.replace(/\.json$/, '') + '-requests.jsonl', `${this.requestLog.join('\n')}\n`);
  }
}

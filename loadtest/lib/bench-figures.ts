// What one bench case measured, and the per-request figures both the bench (`loadtest/bench.ts`)
// and its table (`loadtest/bench-table.ts`) compute from it, so the README's tables are the bench's
// own arithmetic read back from its results files.
import type { CpuUse } from './cpu.ts';
import type { LoadFigures } from './wrk.ts';

/** One closed-loop case of one round: its load figures, the CPU it used and SQL per request. */
export interface Measured {
  figures: LoadFigures;
  cpu: CpuUse;
  /** SQL statements per request sent by sales and by the gateway. */
  statements: { sales: number; gateway: number };
}

/** The fourth half-peak case: (b) at the rate at which it asks the machine for the CPU (a) asks at half peak. */
export const SAME_DEMAND = 'b-same-demand';

/** The gateway's own work: its process and its PostgreSQL backends. */
export const GATEWAY_ITSELF = ['gateway', 'gw-pg'];

/** CPU milliseconds per request of every watched process together (the generator excluded). */
export function cpuPerRequest(m: Measured): number {
  return m.cpu.total / Math.max(1, m.figures.requests);
}

/** CPU milliseconds per request of some watched groups together. */
export function groupsPerRequest(m: Measured, groups: string[]): number {
  return groups.reduce((sum, g) => sum + (m.cpu.groups[g] ?? 0), 0) / Math.max(1, m.figures.requests);
}

/** CPU milliseconds per request of one watched group in its own code (user) or in the kernel on its behalf. */
export function partPerRequest(m: Measured, group: string, part: 'user' | 'kernel'): number {
  const kernel = m.cpu.kernel[group] ?? 0;
  return (part === 'kernel' ? kernel : (m.cpu.groups[group] ?? 0) - kernel) / Math.max(1, m.figures.requests);
}

/** A figure of cases measured in the same round, round by round (NaN in a round that lacks one of them). */
export function perRound(rounds: Record<string, Measured>[], keys: string[], figure: (...cases: Measured[]) => number): number[] {
  return rounds.map((round) => {
    const cases = keys.map((key) => round[key]);
    return cases.every((m) => m !== undefined) ? figure(...(cases as Measured[])) : Number.NaN;
  });
}

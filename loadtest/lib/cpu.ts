// Where the CPU goes during one bench case: the machine as a whole (/proc/stat), the load
// generator (this process's reaped children, /proc/self/stat cutime+cstime: the generator is the
// only child that exits during a case) and each watched group of processes (/proc/<pid>/stat).
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`; 100 on Linux x86-64). */
const TICKS_PER_SECOND = 100;

/** A process's CPU time in clock ticks: in its own code (utime) and in the kernel on its behalf (stime). */
interface Times {
  user: number;
  kernel: number;
}

/** utime and stime of a process in clock ticks, or undefined when it is gone. */
function processTimes(pid: number): Times | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces), counted from `state` = field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]), kernel: Number(fields[12]) };
  } catch {
    return undefined;
  }
}

/** utime + stime of a process in clock ticks, or undefined when it is gone. */
export function processTicks(pid: number): number | undefined {
  const times = processTimes(pid);
  return times && times.user + times.kernel;
}

/** CPU ticks of this process's children that have exited and been waited for. */
function reapedChildrenTicks(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[13]) + Number(fields[14]);
}

/** Busy, stolen and total ticks of all CPUs together (steal: the hypervisor ran something else). */
interface MachineTicks {
  busy: number;
  steal: number;
  total: number;
}

function machineTicks(): MachineTicks {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] as string;
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  const total = values.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (values[3] ?? 0) + (values[4] ?? 0);
  return { busy: total - idle, steal: values[7] ?? 0, total };
}

/** The pids whose parent is `ppid` (nginx's workers). */
export function childrenOf(ppid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === ppid) pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/** A named group of processes whose CPU is accounted per case (pids read again at each snapshot). */
export interface Watched {
  label: string;
  pids: () => number[] | Promise<number[]>;
  /** A subset of another group's processes (shown on its own, already counted in that group's total). */
  partOf?: string;
}

interface Snapshot {
  at: number;
  machine: MachineTicks;
  generator: number;
  groups: Map<string, Map<number, Times>>;
}

async function snapshot(watched: Watched[]): Promise<Snapshot> {
  const groups = new Map<string, Map<number, Times>>();
  for (const w of watched) {
    const ticks = new Map<number, Times>();
    for (const pid of await w.pids()) {
      const t = processTimes(pid);
      if (t !== undefined) ticks.set(pid, t);
    }
    groups.set(w.label, ticks);
  }
  return { at: performance.now(), machine: machineTicks(), generator: reapedChildrenTicks(), groups };
}

/** CPU used during one case: shares of the whole machine (1 = every core busy) and CPU ms per request. */
export interface CpuUse {
  seconds: number;
  /** Busy share of all cores, from /proc/stat (everything on the machine, other work included). */
  machine: number;
  /**
   * The part of `machine` that was steal time: the hypervisor ran another guest (or its own work)
   * while this one had work to run. A VM's noise, not this machine's load.
   */
  steal: number;
  /** The load generator's share of all cores. */
  generator: number;
  /** Per watched group: CPU milliseconds it used. */
  groups: Record<string, number>;
  /** Per watched group: the part of `groups` spent in the kernel on its behalf (system calls, faults; stime). */
  kernel: Record<string, number>;
  /** CPU milliseconds of every watched process, each counted once (groups that are `partOf` another left out). */
  total: number;
}

/** Starts accounting; `stop()` returns what was used since (call it after the generator has exited). */
export async function startCpuAccount(watched: Watched[], cores: number) {
  const before = await snapshot(watched);
  return {
    async stop(): Promise<CpuUse> {
      const after = await snapshot(watched);
      const seconds = (after.at - before.at) / 1000;
      const capacity = seconds * TICKS_PER_SECOND * cores;
      const groups: Record<string, number> = {};
      const kernel: Record<string, number> = {};
      let total = 0;
      const ms = (ticks: number) => (ticks / TICKS_PER_SECOND) * 1000;
      for (const w of watched) {
        const b = before.groups.get(w.label) ?? new Map<number, Times>();
        let user = 0;
        let system = 0;
        // A process that appeared during the case (a new pooled connection's backend) counts whole.
        for (const [pid, t] of after.groups.get(w.label) ?? new Map<number, Times>()) {
          user += t.user - (b.get(pid)?.user ?? 0);
          system += t.kernel - (b.get(pid)?.kernel ?? 0);
        }
        groups[w.label] = ms(user + system);
        kernel[w.label] = ms(system);
        if (w.partOf === undefined) total += groups[w.label] as number;
      }
      const machineTotal = after.machine.total - before.machine.total;
      const share = (ticks: number) => (machineTotal > 0 ? ticks / machineTotal : 0);
      return {
        seconds,
        machine: share(after.machine.busy - before.machine.busy),
        steal: share(after.machine.steal - before.machine.steal),
        generator: (after.generator - before.generator) / capacity,
        groups,
        kernel,
        total,
      };
    },
  };
}

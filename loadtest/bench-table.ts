// `bun loadtest/bench-table.ts [results/bench-<time>.json …]`: the bench's results files as the
// Markdown tables of loadtest/README.md (default: every `bench-*.json` in loadtest/results, oldest
// first). One row per run with the figures the README's per-session tables give, then, per run,
// the gateway's parts in units of (a)'s CPU per read; per round, the write side (d/e beside all that
// (d) costs more per keyed write than (e), in units of (e)'s CPU per write) and the half-peak cases;
// and the `--runtime deno` runs apart. Everything is computed from the rounds the file keeps, with
// the bench's own arithmetic (lib/bench-figures.ts), so a table in the README can be checked
// against the files it came from. Reads files only: run it after the bench, not beside it.
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import {
  cpuPerRequest,
  GATEWAY_ITSELF,
  groupsPerRequest,
  type Measured,
  partPerRequest,
  perRound as perRoundOf,
  SAME_DEMAND,
} from './lib/bench-figures.ts';
import { type Spread, spread, tally, type Verdict } from './lib/bench-targets.ts';
import type { CpuUse } from './lib/cpu.ts';
import { resultsDir } from './lib/k6.ts';
import type { LoadFigures } from './lib/wrk.ts';

interface Run {
  file: string;
  when: string;
  startLoad: string;
  connections: number;
  rounds: Record<string, Measured>[];
  half?: { rate: number; sameDemandRate: number; rounds: Record<string, LoadFigures>[]; shares: Record<string, CpuUse>[] };
  verdicts: Verdict[];
}

/** The d/e target, and the ceiling on (d − e)/(e) under which rounds have held it (README). */
const DE_TARGET = 0.8;
const THIRD = 1 / 3;

function readRun(file: string): Run {
  const data = JSON.parse(readFileSync(file, 'utf8'));
  let connections = data.connections as number | undefined;
  if (connections === undefined) {
    // Files written before the bench kept it: its printed header says it.
    try {
      const text = readFileSync(file.replace(/\.json$/, '.txt'), 'utf8');
      connections = Number(/× (\d+) connections/.exec(text)?.[1]);
    } catch {
      connections = Number.NaN;
    }
  }
  return { ...data, file, connections };
}

const files = process.argv.slice(2);
const runs = (
  files.length > 0
    ? files
    : readdirSync(resultsDir)
        .filter((f) => /^bench-.*\.json$/.test(f))
        .sort()
        .map((f) => join(resultsDir, f))
).map(readRun);
const isDeno = (r: Run) => r.rounds[0]?.['deno:b'] !== undefined;

const fixed = (n: number, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : '-');
const whole = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
const pct = (share: number) => `${fixed(share * 100, 1)} %`;
const bold = (text: string, when: boolean) => (when ? `**${text}**` : text);
const table = (header: string[], rows: string[][]) =>
  [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
/** The run's name in the README: its start (UTC, hh:mm) and the load average then. */
const label = (r: Run) => `${r.when.slice(11, 16).replace('-', ':')} (${r.startLoad.split(' ')[0]})`;
/** The run's name in the per-round tables: its start, and its connections where not 16. */
const short = (r: Run) => `${r.when.slice(11, 16).replace('-', ':')}${r.connections === 16 ? '' : ` (${r.connections})`}`;

/** A figure of cases of the same round of a run, round by round. */
const perRound = (r: Run, keys: string[], figure: (...cases: Measured[]) => number) => perRoundOf(r.rounds, keys, figure);
const med = (values: number[]) => spread(values).median;
const rps = (r: Run, key: string) => med(perRound(r, [key], (m) => m.figures.rps));
const ratio = (r: Run, over: string, under: string) => med(perRound(r, [over, under], (o, u) => o.figures.rps / u.figures.rps));
const us = (ms: number) => ms * 1000;
const shareOf = (r: Run, over: string, under: string, groups: string[]) =>
  med(perRound(r, [over, under], (o, u) => groupsPerRequest(o, groups) / cpuPerRequest(u)));
const halfMedian = (r: Run, key: string, pick: (f: LoadFigures) => number) =>
  med((r.half?.rounds ?? []).map((round) => (round[key] ? pick(round[key]) : Number.NaN)));
const halfShare = (r: Run, key: string, pick: (c: CpuUse) => number) =>
  med((r.half?.shares ?? []).map((s) => (s[key] ? pick(s[key]) : Number.NaN)));
/** Pearson's correlation of two series (NaN pairs left out). */
function correlation(xs: number[], ys: number[]): number {
  const pairs = xs.map((x, i) => [x, ys[i] as number]).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  const mean = (k: 0 | 1) => pairs.reduce((s, p) => s + (p[k] as number), 0) / pairs.length;
  const [mx, my] = [mean(0), mean(1)];
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (const [x, y] of pairs as [number, number][]) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
    syy += (y - my) ** 2;
  }
  return sxy / Math.sqrt(sxx * syy);
}
const range = (values: number[], d = 3) => {
  const s: Spread = spread(values.filter(Number.isFinite));
  if (values.length === 0) return '-';
  return s.min === s.max ? fixed(s.min, d) : `${fixed(s.min, d)}–${fixed(s.max, d)}`;
};

const bun = runs.filter((r) => !isDeno(r));
const deno = runs.filter(isDeno);

if (bun.length > 0) {
  console.log(`## Runs (${bun.length}; medians over the rounds; bold: a d/e, b/c or b/a hold, a p99 miss)\n`);
  console.log(
    table(
      [
        'run (load)',
        'connections',
        'floor by id',
        '(a)',
        '(b)',
        '(c)',
        '(e) / (d) writes/s',
        'd/e',
        'b/c',
        'b/a',
        'b/p',
        '(b) busy',
        '(b) p50',
        'half-peak p99: (b) / (a) / floor, at, steal',
        "(b) at (a)'s CPU demand: rate, busy, p99, steal",
        'a/floor by id',
        'CPU µs: b − a / b − p per read, d − e per write',
        'CPU µs of the gateway itself: per read (b) / the rest more / per write (d)',
        'CPU µs/read gateway − proxy: user / kernel',
        "gateway itself / (a)'s CPU per read",
        "bare proxy / (a)'s CPU per read",
        "(a)'s CPU µs per read",
        'verdict',
      ],
      bun.map((r) => {
        const delta = (o: string, u: string) => whole(us(med(perRound(r, [o, u], (x, y) => cpuPerRequest(x) - cpuPerRequest(y)))));
        const itself = (key: string) => whole(us(med(perRound(r, [key], (m) => groupsPerRequest(m, GATEWAY_ITSELF)))));
        const rest = whole(
          us(med(perRound(r, ['b', 'a'], (b, a) => cpuPerRequest(b) - groupsPerRequest(b, GATEWAY_ITSELF) - cpuPerRequest(a)))),
        );
        const overProxy = (part: 'user' | 'kernel') =>
          whole(us(med(perRound(r, ['b', 'p'], (b, p) => partPerRequest(b, 'gateway', part) - partPerRequest(p, 'proxy', part)))));
        const de = ratio(r, 'd', 'e');
        const bc = ratio(r, 'b', 'c');
        const ba = ratio(r, 'b', 'a');
        const halfB = halfMedian(r, 'b', (f) => f.p99);
        const same = halfMedian(r, SAME_DEMAND, (f) => f.p99);
        return [
          label(r),
          String(r.connections),
          whole(rps(r, 'floor')),
          whole(rps(r, 'a')),
          whole(rps(r, 'b')),
          whole(rps(r, 'c')),
          `${whole(rps(r, 'e'))} / ${whole(rps(r, 'd'))}`,
          bold(fixed(de), de >= DE_TARGET),
          bold(fixed(bc), bc >= 0.8),
          bold(fixed(ba), ba >= 0.75),
          fixed(ratio(r, 'b', 'p')),
          pct(med(perRound(r, ['b'], (m) => m.cpu.machine))),
          `${fixed(med(perRound(r, ['b'], (m) => m.figures.p50)))} ms`,
          r.half
            ? `${bold(fixed(halfB), halfB >= 20)} / ${fixed(halfMedian(r, 'a', (f) => f.p99))} / ${fixed(halfMedian(r, 'floor', (f) => f.p99))} ms, ${whole(r.half.rate)}/s, ${pct(halfShare(r, 'b', (c) => c.steal))}`
            : '-',
          r.half
            ? `${whole(r.half.sameDemandRate)}/s, ${pct(halfShare(r, SAME_DEMAND, (c) => c.machine))}, ${bold(fixed(same), same >= 20)} ms, ${pct(halfShare(r, SAME_DEMAND, (c) => c.steal))}`
            : '-',
          fixed(ratio(r, 'a', 'floor')),
          `${delta('b', 'a')} / ${delta('b', 'p')} / ${delta('d', 'e')}`,
          `${itself('b')} / ${rest} / ${itself('d')}`,
          `${overProxy('user')} / ${overProxy('kernel')}`,
          fixed(shareOf(r, 'b', 'a', GATEWAY_ITSELF)),
          fixed(shareOf(r, 'p', 'a', ['proxy'])),
          whole(us(med(perRound(r, ['a'], cpuPerRequest)))),
          tally(r.verdicts),
        ];
      }),
    ),
  );

  console.log(`\n## In units of (a)'s CPU per read (per round with (a), (p) and (b) of the same round, medians)\n`);
  console.log(
    table(
      ['run', 'bare proxy', "policies' user time", "policies' kernel time", 'gw-pg', 'gateway itself', 'gateway itself − proxy'],
      bun.map((r) => {
        const ofA = (figure: (b: Measured, p: Measured) => number) =>
          fixed(med(perRound(r, ['b', 'p', 'a'], (b, p, a) => figure(b, p) / cpuPerRequest(a))));
        const policies = (part: 'user' | 'kernel') => ofA((b, p) => partPerRequest(b, 'gateway', part) - partPerRequest(p, 'proxy', part));
        return [
          short(r),
          ofA((_, p) => groupsPerRequest(p, ['proxy'])),
          policies('user'),
          policies('kernel'),
          ofA((b) => groupsPerRequest(b, ['gw-pg'])),
          ofA((b) => groupsPerRequest(b, GATEWAY_ITSELF)),
          ofA((b, p) => groupsPerRequest(b, GATEWAY_ITSELF) - groupsPerRequest(p, ['proxy'])),
        ];
      }),
    ),
  );

  // The write side, round by round: z = all that (d) costs more per keyed write than (e), x = the
  // gateway itself's part of it, z − x = what sales and its backends cost more beside the gateway.
  const writeRows: { run: Run; round: number; de: number; z: number; x: number }[] = [];
  const writeTable: string[][] = [];
  for (const r of bun)
    r.rounds.forEach((round, i) => {
      const d = round.d;
      const e = round.e;
      if (!d || !e) return;
      const de = d.figures.rps / e.figures.rps;
      const z = (cpuPerRequest(d) - cpuPerRequest(e)) / cpuPerRequest(e);
      const x = groupsPerRequest(d, GATEWAY_ITSELF) / cpuPerRequest(e);
      writeRows.push({ run: r, round: i + 1, de, z, x });
      writeTable.push([
        short(r),
        String(i + 1),
        `${whole(e.figures.rps)} / ${whole(d.figures.rps)}`,
        bold(fixed(de, 4), de >= DE_TARGET),
        fixed(z, 3),
        fixed(x, 3),
        fixed(z - x, 3),
        whole(us(cpuPerRequest(e))),
        whole(us(groupsPerRequest(d, GATEWAY_ITSELF))),
        `${pct(e.cpu.machine)} / ${pct(d.cpu.machine)}`,
        pct(Math.max(e.cpu.steal, d.cpu.steal)),
      ]);
    });
  console.log(
    `\n## The write side per round (z = (d − e) / (e)'s CPU per write; x = the gateway itself / (e)'s; bold: d/e ≥ ${DE_TARGET})\n`,
  );
  console.log(
    table(
      [
        'run',
        'round',
        '(e) / (d) writes/s',
        'd/e',
        'z',
        'x',
        'z − x',
        "(e)'s CPU µs per write",
        'gateway itself µs per write',
        '(e) / (d) busy',
        'steal',
      ],
      writeTable,
    ),
  );
  const held = (rows: typeof writeRows) => rows.filter((w) => w.de >= DE_TARGET);
  const atMost = writeRows.filter((w) => w.z <= THIRD);
  const above = writeRows.filter((w) => w.z > THIRD);
  const missed = (rows: typeof writeRows) => rows.filter((w) => w.de < DE_TARGET);
  console.log(
    `\nRounds at or below a third: ${atMost.length}, of which ${held(atMost).length} held d/e (misses at z ${range(missed(atMost).map((w) => w.z))}); above: ${above.length}, ${held(above).length} held (at z ${range(held(above).map((w) => w.z))}), misses at z ${range(missed(above).map((w) => w.z))}.`,
  );
  console.log(
    `Correlation with d/e: z ${fixed(
      correlation(
        writeRows.map((w) => w.z),
        writeRows.map((w) => w.de),
      ),
    )}, x ${fixed(
      correlation(
        writeRows.map((w) => w.x),
        writeRows.map((w) => w.de),
      ),
    )}, z − x ${fixed(
      correlation(
        writeRows.map((w) => w.z - w.x),
        writeRows.map((w) => w.de),
      ),
    )}.`,
  );

  console.log(`\n## Half peak per round (p99 ms; busy and steal shares of the machine)\n`);
  const halfRows: string[][] = [];
  for (const r of bun)
    (r.half?.rounds ?? []).forEach((round, i) => {
      const shares = r.half?.shares[i] ?? {};
      const cell = (key: string) =>
        round[key]
          ? `${fixed(round[key].p99)} (${pct(shares[key]?.machine ?? Number.NaN)}, ${pct(shares[key]?.steal ?? Number.NaN)})`
          : '-';
      halfRows.push([
        short(r),
        String(i + 1),
        `${whole(r.half?.rate ?? Number.NaN)} / ${whole(r.half?.sameDemandRate ?? Number.NaN)}`,
        cell('b'),
        cell('a'),
        cell('floor'),
        cell(SAME_DEMAND),
      ]);
    });
  console.log(table(['run', 'round', 'rate / same-demand rate', '(b)', '(a)', 'floor', "(b) at (a)'s CPU demand"], halfRows));
}

if (deno.length > 0) {
  console.log(`\n## --runtime deno runs (Deno/Bun per case; the Deno stack's own ratios and the gateway's parts)\n`);
  console.log(
    table(
      [
        'run (load)',
        'floor',
        '(a)',
        '(b)',
        '(c)',
        '(p)',
        '[deno] a/floor, b/a, b/c',
        '[deno] gateway itself µs/read, / (a)',
        '[deno] bare proxy / (a)',
        '[deno] gateway itself − proxy / (a)',
        'Bun gateway itself µs/read',
      ],
      deno.map((r) => {
        const dab = (k: string) => fixed(ratio(r, `deno:${k}`, k));
        return [
          label(r),
          dab('floor'),
          dab('a'),
          dab('b'),
          dab('c'),
          dab('p'),
          `${fixed(ratio(r, 'deno:a', 'deno:floor'))}, ${fixed(ratio(r, 'deno:b', 'deno:a'))}, ${fixed(ratio(r, 'deno:b', 'deno:c'))}`,
          `${whole(us(med(perRound(r, ['deno:b'], (m) => groupsPerRequest(m, GATEWAY_ITSELF)))))}, ${fixed(shareOf(r, 'deno:b', 'deno:a', GATEWAY_ITSELF))}`,
          fixed(shareOf(r, 'deno:p', 'deno:a', ['proxy'])),
          fixed(
            med(
              perRound(
                r,
                ['deno:b', 'deno:p', 'deno:a'],
                (b, p, a) => (groupsPerRequest(b, GATEWAY_ITSELF) - groupsPerRequest(p, ['proxy'])) / cpuPerRequest(a),
              ),
            ),
          ),
          whole(us(med(perRound(r, ['b'], (m) => groupsPerRequest(m, GATEWAY_ITSELF))))),
        ];
      }),
    ),
  );
}

// The CPU profiles a run took (`profile-<time>/<process>/*.md`, `bun --cpu-prof-md`): per profile,
// each function of a top ten with its self-time share over the runs, and how often it was in one (a
// name can stand for two functions of one profile).
const profiles = new Map<string, Map<string, number[]>>();
let profiled = 0;
for (const r of bun) {
  const dir = join(resultsDir, `profile-${r.when}`);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    continue;
  }
  profiled += 1;
  for (const name of names)
    for (const md of readdirSync(join(dir, name)).filter((f) => f.endsWith('.md'))) {
      const top = /\*\*Top 10:\*\* (.*)/.exec(readFileSync(join(dir, name, md), 'utf8'))?.[1] ?? '';
      const functions = profiles.get(name) ?? new Map<string, number[]>();
      for (const [, fn, share] of top.matchAll(/`([^`]+)` ([\d.]+)%/g))
        functions.set(fn as string, [...(functions.get(fn as string) ?? []), Number(share)]);
      profiles.set(name, functions);
    }
}
if (profiles.size > 0) {
  console.log(`\n## CPU profiles (${profiled} runs): self time of each function in a top ten, over the runs\n`);
  for (const [name, functions] of [...profiles].sort(([a], [b]) => a.localeCompare(b))) {
    const ranked = [...functions].sort(([, a], [, b]) => spread(b).median - spread(a).median);
    console.log(`- ${name}: ${ranked.map(([fn, shares]) => `\`${fn}\` ${range(shares, 1)} % (${shares.length})`).join(', ')}`);
  }
}

if (runs.length === 0) console.log(`no bench-*.json in ${resultsDir} (run \`npm run bench\` first)`);
else console.error(`\n(${runs.map((r) => basename(r.file)).join(', ')})`);

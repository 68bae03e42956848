// How long and with which seed the fuzz runs: a bounded run in `npm test`, a long one in
// `npm run fuzz` (FUZZ_PROFILE=long), either replayable with FUZZ_SEED (and FUZZ_RUNS).

export interface FuzzConfig {
  seed: number;
  /** Cases in all, spread evenly over the operations. */
  runs: number;
  /** Time for the cases themselves (stack start and seeding excluded); later cases are skipped. */
  timeLimitMs: number;
  profile: 'bounded' | 'long';
}

/** The bounded run's fixed seed: `npm test` sends the same cases every time (a stable yardstick). */
const BOUNDED_SEED = 20261123;

function positiveInt(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value)) throw new Error(`${name} must be an integer, got ${JSON.stringify(raw)}`);
  return value;
}

/** Reads FUZZ_PROFILE, FUZZ_SEED, FUZZ_RUNS and FUZZ_TIME_LIMIT_S from the environment. */
export function fuzzConfig(env: Record<string, string | undefined> = process.env): FuzzConfig {
  const profile = env.FUZZ_PROFILE === 'long' ? 'long' : 'bounded';
  const randomSeed = (Date.now() ^ Math.floor(Math.random() * 0x7fffffff)) & 0x7fffffff;
  return {
    profile,
    seed: positiveInt(env, 'FUZZ_SEED', profile === 'long' ? randomSeed : BOUNDED_SEED),
    runs: positiveInt(env, 'FUZZ_RUNS', profile === 'long' ? 6000 : 450),
    timeLimitMs: positiveInt(env, 'FUZZ_TIME_LIMIT_S', profile === 'long' ? 300 : 35) * 1000,
  };
}

/** The command line that replays a run. */
export function replayHint(config: FuzzConfig): string {
  return `replay: FUZZ_SEED=${config.seed} FUZZ_RUNS=${config.runs} FUZZ_TIME_LIMIT_S=${config.timeLimitMs / 1000} npm run fuzz`;
}

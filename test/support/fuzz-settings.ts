/** How many cases a property runs, from which seed, and the shrunk case to go straight to. */
export interface FuzzSettings {
  runs: number;
  seed: number;
  /** fast-check's `path` of a reported failure (FUZZ_PATH), to replay only that case. */
  path: string | undefined;
}

/**
 * The fuzz specs' one reading of FUZZ_RUNS, FUZZ_SEED and FUZZ_PATH (docs/operations.md#hostile-input): the
 * suite runs `ciRuns` cases from the fixed `ciSeed` (the same cases every run); `npm run fuzz`
 * sets FUZZ_RUNS and gets a fresh seed, which a failing run prints so that FUZZ_SEED replays it.
 * `maxRuns` caps a property whose cases are costly whatever FUZZ_RUNS asks.
 */
export function fuzzSettings(ciRuns: number, ciSeed: number, maxRuns = Infinity): FuzzSettings {
  const asked = process.env.FUZZ_RUNS;
  return {
    runs: Math.min(Number(asked ?? ciRuns), maxRuns),
    seed: Number(process.env.FUZZ_SEED ?? (asked ? Date.now() % 2 ** 31 : ciSeed)),
    path: process.env.FUZZ_PATH,
  };
}

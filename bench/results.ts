import { appendFileSync } from 'node:fs';

/** One row of `npm run bench`'s table: a performance target of docs/benchmarks.md. */
export interface TargetRow {
  target: string;
  /** What the service did, with its unit. */
  figure: string;
  /** The same-run baseline it is held against, or what the target is bounded by. */
  baseline: string;
  /** figure ÷ baseline when the target is a ratio, else '-'. */
  ratio: string;
  met: boolean;
}

/**
 * Hands a target's row to bench/all.ts (the file named by BENCH_RESULTS, one JSON line per
 * row); run on their own, the benches print their summaries only.
 */
export function recordTarget(row: TargetRow): void {
  const file = process.env.BENCH_RESULTS;
  if (file) appendFileSync(file, `${JSON.stringify(row)}\n`);
}

/** BENCH_SCALE (1 by default): every burst's size times it, for a quick check of the benches. */
export const SCALE = Math.min(Math.max(Number(process.env.BENCH_SCALE ?? 1) || 1, 0.001), 1);

/** `n` events at BENCH_SCALE, at least 20. */
export const scaled = (n: number): number => Math.max(20, Math.round(n * SCALE));

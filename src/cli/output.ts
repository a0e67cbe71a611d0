import Table from 'cli-table3';

/** Where the CLI writes: stdout for results, stderr for messages (tests capture both). */
export interface Output {
  out(text: string): void;
  err(text: string): void;
  /** The terminal's width, when it is one; tables are wrapped to fit it. */
  columns?: number;
}

export const processOutput: Output = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  get columns() {
    return process.stdout.columns;
  },
};

/** The width tables fit when the output is not a terminal (a pipe, a file): a common one. */
export const DEFAULT_WIDTH = 100;

/**
 * Widths (padding included) for columns whose widest cells are `natural` characters and whose
 * longest words are `words`, within a table `width` wide: as they are when they fit (undefined),
 * else each column its longest word, never cut (an id or a time is copied from here), and what
 * room is left shared out, the least needy first, their text wrapped at spaces. A table whose
 * words alone are wider than `width` is as wide as they are.
 */
export function fitColumns(
  natural: number[],
  words: number[],
  width: number,
): number[] | undefined {
  // cli-table3 draws a border left of each column and one at the right end.
  let room = width - (natural.length + 1);
  if (natural.reduce((a, b) => a + b, 0) <= room) return undefined;
  const widths = [...words];
  room -= words.reduce((a, b) => a + b, 0);
  const needy = natural.map((_, i) => i).filter((i) => natural[i] > words[i]);
  needy.sort((a, b) => natural[a] - words[a] - (natural[b] - words[b]));
  needy.forEach((i, n) => {
    const share = Math.max(
      0,
      Math.min(natural[i] - words[i], Math.floor(room / (needy.length - n))),
    );
    widths[i] += share;
    room -= share;
  });
  return widths;
}

const lines = (cells: string[]): string[] => cells.flatMap((c) => c.split('\n'));
// Reduced, not Math.max(...): a long listing would overflow the stack as arguments.
const longest = (lengths: number[]): number => lengths.reduce((a, b) => Math.max(a, b), 0);
const naturalWidth = (cells: string[]): number =>
  longest(lines(cells).map((line) => line.length)) + 2;
const wordWidth = (cells: string[]): number =>
  longest(lines(cells).flatMap((line) => line.split(' ').map((word) => word.length))) + 2;

/**
 * One value as a cell. A list of objects (a run's errors, say) gets a line each, every object
 * as `field: value` pairs: never `[object Object]`.
 */
const cell = (value: unknown): string => {
  if (value === null || value === undefined) return '-';
  if (Array.isArray(value)) {
    if (value.length === 0) return '-';
    const objects = value.some((v) => typeof v === 'object' && v !== null);
    return value.map((v) => (objects ? pairs(v) : cell(v))).join(objects ? '\n' : ', ');
  }
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
};

const pairs = (value: unknown): string =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? Object.entries(value)
        .map(([field, v]) => `${field}: ${cell(v)}`)
        .join(', ')
    : cell(value);

/** A cli-table3 table of these cells, `width` characters wide at most. */
function drawn(head: string[] | undefined, cells: string[][], width: number): string {
  const columns = cells[0]?.length ?? head?.length ?? 0;
  const column = (i: number) => [...(head ? [head[i]] : []), ...cells.map((row) => row[i])];
  const indexes = Array.from({ length: columns }, (_, i) => i);
  const colWidths = fitColumns(
    indexes.map((i) => naturalWidth(column(i))),
    indexes.map((i) => wordWidth(column(i))),
    width,
  );
  const t = new Table({
    ...(head ? { head } : {}),
    style: { head: [], border: [] },
    ...(colWidths ? { colWidths, wordWrap: true, wrapOnWordBoundary: true } : {}),
  });
  t.push(...cells);
  return t.toString();
}

/**
 * Rows as a table with these columns, for people, fitting `width` (the terminal's): long
 * cells are wrapped; `--json` prints the data instead.
 */
export function table(
  rows: Record<string, unknown>[],
  columns: string[],
  width = DEFAULT_WIDTH,
): string {
  if (rows.length === 0) return '(none)';
  return drawn(
    columns,
    rows.map((row) => columns.map((c) => cell(row[c]))),
    width,
  );
}

/** One object as two columns, field and value, fitting `width` as table() does. */
export function record(
  value: Record<string, unknown>,
  fields?: string[],
  width = DEFAULT_WIDTH,
): string {
  const shown = (fields ?? Object.keys(value)).filter((field) => field in value);
  return drawn(
    undefined,
    shown.map((field) => [field, cell(value[field])]),
    width,
  );
}

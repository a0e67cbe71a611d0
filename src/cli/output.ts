import Table from 'cli-table3';

/** Where the CLI writes: stdout for results, stderr for messages (tests capture both). */
export interface Output {
  out(text: string): void;
  err(text: string): void;
}

export const processOutput: Output = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
};

const cell = (value: unknown): string => {
  if (value === null || value === undefined) return '-';
  if (Array.isArray(value)) return value.join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
};

/** Rows as a table with these columns, for people; `--json` prints the data instead. */
export function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const t = new Table({ head: columns, style: { head: [], border: [] } });
  for (const row of rows) t.push(columns.map((c) => cell(row[c])));
  return t.toString();
}

/** One object as two columns, field and value. */
export function record(value: Record<string, unknown>, fields?: string[]): string {
  const t = new Table({ style: { head: [], border: [] } });
  for (const field of fields ?? Object.keys(value)) {
    if (field in value) t.push({ [field]: cell(value[field]) });
  }
  return t.toString();
}

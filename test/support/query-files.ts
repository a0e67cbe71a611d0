import { readFileSync, writeFileSync } from 'fs';
import { relative } from 'path';
import type { Statement } from '../../src/delivery-record/statement';

const ROOT = `${__dirname}/../..`;

/** The text as the file shows it: indentation common to its lines taken off, nothing else. */
function shown(sql: string): string {
  const lines = sql.replace(/^\n+/, '').trimEnd().split('\n');
  const indents = lines.filter((l) => l.trim() !== '').map((l) => /^ */.exec(l)![0].length);
  const cut = Math.min(...indents);
  return lines.map((l) => l.slice(cut)).join('\n');
}

/** A store's reviewed file: a comment naming the method, then the statement, for each. */
export function renderQueryFile(statements: Statement[], spec: string): string {
  const head =
    `-- Every statement of this store as PostgreSQL receives it (leading indentation aside).\n` +
    `-- Written by UPDATE_QUERIES=1 npx jest ${spec}; that spec fails when the code and this disagree.\n`;
  const blocks = statements.map(
    (s) => `-- ${s.method}${s.prepared ? ` (prepared as ${s.prepared})` : ''}\n${shown(s.sql)};\n`,
  );
  return [head, ...blocks].join('\n');
}

/**
 * Compares `file` with the statements' rendering; with UPDATE_QUERIES=1 writes it instead.
 * Throws, naming the first line that differs, when they disagree.
 */
export function checkQueryFile(file: string, statements: Statement[], specFile: string): void {
  const spec = relative(ROOT, specFile);
  const rendered = renderQueryFile(statements, spec);
  if (process.env.UPDATE_QUERIES === '1') {
    writeFileSync(file, rendered);
    return;
  }
  let kept = '';
  try {
    kept = readFileSync(file, 'utf8');
  } catch {
    // A missing file differs from every rendering: reported below like any other difference.
  }
  if (kept === rendered) return;
  const want = rendered.split('\n');
  const have = kept.split('\n');
  const line = want.findIndex((l, i) => l !== have[i]);
  throw new Error(
    `${relative(ROOT, file)} is not what the code runs (line ${line + 1}: ` +
      `code ${JSON.stringify(want[line])}, file ${JSON.stringify(have[line])}): ` +
      `run UPDATE_QUERIES=1 npx jest ${spec}`,
  );
}

/** Every prepared name once: PostgreSQL keeps one statement per name and connection. */
export function duplicatePreparedNames(statements: Statement[]): string[] {
  const names = statements.flatMap((s) => (s.prepared ? [s.prepared] : []));
  return names.filter((n, i) => names.indexOf(n) !== i);
}

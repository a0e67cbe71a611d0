import { readFileSync, readdirSync } from 'fs';
import { dirname, join, relative, resolve } from 'path';
import { preProcessFile } from 'typescript';

const SRC = join(__dirname, '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** Each file of src/ (specs aside) with the files of src/ it imports, type-only imports too. */
function importGraph(): Map<string, string[]> {
  const files = new Set(sourceFiles(SRC));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .filter((i) => i.fileName.startsWith('.'))
      .map((i) => resolve(dirname(file), i.fileName))
      .flatMap((base) => [`${base}.ts`, join(base, 'index.ts')].filter((f) => files.has(f)));
    graph.set(
      relative(SRC, file),
      [...new Set(targets)].map((f) => relative(SRC, f)),
    );
  }
  return graph;
}

/** Every import cycle, each once, as the files around it. */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const done = new Set<string>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const visit = (file: string) => {
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (onStack.has(next)) found.push(stack.slice(stack.indexOf(next)).concat(next));
      else if (!done.has(next)) visit(next);
    }
    stack.pop();
    onStack.delete(file);
    done.add(file);
  };
  for (const file of graph.keys()) if (!done.has(file)) visit(file);
  return found;
}

/** Imports from a folder to one it must not import (docs/architecture.md, "Layout"). */
const FORBIDDEN: [from: string, to: string][] = [
  ['dispatcher/engine/', 'dispatcher/api/'],
  ['dispatcher/publish/', 'dispatcher/engine/'],
  ['dispatcher/publish/', 'dispatcher/api/'],
  ['dispatcher/operational-events/', 'dispatcher/engine/'],
  ['delivery-record/', 'dispatcher/'],
  ['common/', 'telemetry/'],
  // The floors below everything (docs/architecture.md, "Layout"): config reads the environment,
  // the record and common carry data, none of them knows the parts that use them.
  ['config/', 'destinations/'],
  ['config/', 'inbound/'],
  ['common/', 'inbound/'],
  ['delivery-record/', 'inbound/'],
];

describe('imports between the parts of src/ (docs/architecture.md)', () => {
  const graph = importGraph();

  it('has no import cycle', () => {
    expect(cycles(graph).map((cycle) => cycle.join(' -> '))).toEqual([]);
  });

  it.each(FORBIDDEN)('nothing in %s imports %s', (from, to) => {
    const upward = [...graph].flatMap(([file, targets]) =>
      file.startsWith(from)
        ? targets.filter((t) => t.startsWith(to)).map((t) => `${file} -> ${t}`)
        : [],
    );
    expect(upward).toEqual([]);
  });

  // A migration's result must not change when today's code does: it carries what it needs.
  it('no migration imports from outside src/database/', () => {
    const reaching = [...graph].flatMap(([file, targets]) =>
      file.startsWith('database/migrations/')
        ? targets.filter((t) => !t.startsWith('database/')).map((t) => `${file} -> ${t}`)
        : [],
    );
    expect(reaching).toEqual([]);
  });
});

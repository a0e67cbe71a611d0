import { existsSync, readFileSync, readdirSync } from 'fs';
import { join } from 'path';

const ROOT = join(__dirname, '..');
const DOC = 'docs/architecture.md';

/** Every folder under src/, as `src/a/b`. */
function folders(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const path = `${dir}/${entry.name}`;
      return [path, ...folders(path)];
    });
}

/** What the document writes in backquotes that is a path of the repository (no pattern). */
function namedPaths(text: string): string[] {
  return [...text.matchAll(/`([^`\s]+)`/g)]
    .map(([, token]) => token)
    .filter((token) => /^(src|test|bench|scripts|docs|console|docker)\//.test(token))
    .filter((token) => !/[*<>{}]/.test(token));
}

describe(`${DOC} is true to the tree`, () => {
  const named = namedPaths(readFileSync(join(ROOT, DOC), 'utf8'));

  it('names every folder under src/', () => {
    const names = new Set(named.map((path) => path.replace(/\/$/, '')));
    expect(folders('src').filter((folder) => !names.has(folder))).toEqual([]);
  });

  it('names no path that is gone', () => {
    expect(named.filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
  });

  it('reads paths in backquotes, patterns aside', () => {
    expect(namedPaths('`src/a/` and `src/b.ts`, not `queries/<store>.sql` nor `src/c-*`')).toEqual([
      'src/a/',
      'src/b.ts',
    ]);
  });
});

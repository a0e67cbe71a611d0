/**
 * Static checks that the documents tell the truth about the repository: links resolve, the
 * configuration reference matches .env.example, the README's commands are the ones CI and the
 * try-out scripts use, and no document points at files users do not have.
 */
import * as fs from 'fs';
import * as path from 'path';
import { TRYOUT } from '../scripts/tryout-settings';
import { ROOT, envExampleVariables } from './support/deploy-files';

const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const DOCUMENTS = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchors(markdown: string): Set<string> {
  const headings = markdown.split('\n').filter((line) => /^#{1,6} /.test(line));
  return new Set(
    headings.map((line) =>
      line
        .replace(/^#+ /, '')
        .toLowerCase()
        .replace(/[^\p{L}\p{N} -]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
}

describe('README and docs/', () => {
  it('has the documents the README promises', () => {
    expect(DOCUMENTS).toEqual(
      expect.arrayContaining([
        'docs/api.md',
        'docs/configuration.md',
        'docs/deployment.md',
        'docs/operations.md',
        'docs/architecture.md',
        'docs/benchmarks.md',
      ]),
    );
  });

  it.each(DOCUMENTS)('%s links only to files and headings that exist', (document) => {
    const broken: string[] = [];
    for (const [, target] of read(document).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^https?:/.test(target)) continue;
      const [file, anchor] = target.split('#');
      const resolved = file ? path.join(path.dirname(document), file) : document;
      if (!fs.existsSync(path.join(ROOT, resolved))) broken.push(target);
      else if (anchor && !anchors(read(resolved)).has(anchor)) broken.push(target);
    }
    expect(broken).toEqual([]);
  });

  it.each(DOCUMENTS)('%s points at nothing outside the repository', (document) => {
    expect(read(document)).not.toMatch(/SPEC\.md|\.\.\/shared|SPEC §/);
  });

  it('code and help text cite docs/, never a section of a document users do not have', () => {
    const SECTION = /\u00a7\s?\d/g;
    const sources = (dir: string): string[] =>
      fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
        const file = `${dir}/${entry.name}`;
        if (entry.isDirectory()) return entry.name === 'generated' ? [] : sources(file);
        return /\.(ts|tsx|js)$/.test(entry.name) ? [file] : [];
      });
    const found: string[] = [];
    for (const file of ['src', 'test', 'scripts', 'bench', 'bin', 'console/src'].flatMap(sources)) {
      const text = read(file);
      for (const match of text.matchAll(SECTION)) {
        // An RFC's section is a public document's.
        if (/RFC \d+ $/.test(text.slice(Math.max(0, match.index - 12), match.index))) continue;
        found.push(`${file}: …${text.slice(Math.max(0, match.index - 30), match.index + 4)}`);
      }
      if (/SPEC\.md|\.\.\/shared\//.test(text) && file !== 'test/docs.e2e-spec.ts') {
        found.push(`${file}: names SPEC.md or ../shared/`);
      }
    }
    expect(found).toEqual([]);
  });

  it('keeps the README short', () => {
    expect(read('README.md').split('\n').length).toBeLessThan(120);
  });

  it("gives the test command CI runs (.ci/run runs the README's)", () => {
    const commands = /```sh[^\n]*\n([\s\S]*?)```/.exec(read('README.md'))?.[1] ?? '';
    const testLine = commands.split('\n').find((line) => /test/.test(line)) ?? '';
    const command = testLine.replace(/#.*$/, '').trim();
    expect(command).toBe('npm test');
    expect(read('.ci/run')).toMatch(new RegExp(`^${command}$`, 'm'));
  });

  it('uses only npm scripts that exist', () => {
    const scripts = Object.keys(
      (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts,
    );
    const used = DOCUMENTS.flatMap((d) => [...read(d).matchAll(/npm run ([a-z0-9:-]+)/g)]).map(
      (m) => m[1],
    );
    expect(used.length).toBeGreaterThan(3);
    expect(used.filter((name) => !scripts.includes(name))).toEqual([]);
  });

  it("gives the try-out the scripts' own values", () => {
    const readme = read('README.md');
    expect(readme).toContain(
      `meb login --client-id ${TRYOUT.clientId} --client-secret ${TRYOUT.clientSecret}`,
    );
    expect(readme).toContain(`http://127.0.0.1:${TRYOUT.receiverPort}/hook`);
    expect(readme).toContain(`\`${new URL(TRYOUT.databaseUrl).pathname.slice(1)}\``);
    expect(readme).toContain(`http://localhost:${TRYOUT.servicePort}/docs`);
    expect(readme).toContain('npm run send-event -- meeting.started');
    expect(readme).toContain('npm run tryout -- --reset');
  });
});

describe('docs/configuration.md', () => {
  const rows = read('docs/configuration.md')
    .split('\n')
    .flatMap((line) => {
      const match = /^\| `([A-Z][A-Z0-9_]*)` +\| ([^|]*?) +\|/.exec(line);
      return match ? [{ name: match[1], fallback: match[2] }] : [];
    });
  const example = Object.fromEntries(
    read('.env.example')
      .split('\n')
      .flatMap((line) => {
        const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
        return match ? [[match[1], match[2]]] : [];
      }),
  );

  it('describes exactly the variables .env.example lists, each once', () => {
    expect(rows.map((r) => r.name).sort()).toEqual(envExampleVariables().sort());
  });

  it('gives the defaults .env.example gives', () => {
    const literal = rows.filter((r) => /^`[^`$]*`$/.test(r.fallback));
    expect(literal.length).toBeGreaterThan(20);
    for (const { name, fallback } of literal) {
      expect({ name, fallback: fallback.slice(1, -1) }).toEqual({ name, fallback: example[name] });
    }
  });
});

describe('files under docker/ and .env.example', () => {
  const files = [
    '.env.example',
    ...fs
      .readdirSync(path.join(ROOT, 'docker'), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name))),
  ];

  it.each(files)('%s names only documents that exist', (file) => {
    const named = [...read(file).matchAll(/[\w./-]+\.md\b/g)].map((m) => m[0]);
    expect(named.filter((doc) => !fs.existsSync(path.join(ROOT, doc)))).toEqual([]);
  });
});

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { request } from './support/http';
import { TestApp, startTestApp } from './support/test-app';

const ROOT = join(__dirname, '..');
const run = promisify(execFile);

interface Problem {
  severity: string;
  rule: string;
  where: string;
  message: string;
}

/** Runs a linter's CLI; both exit 1 when they find errors, and still print their report. */
async function lint(bin: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await run(join(ROOT, 'node_modules', '.bin', bin), args, {
      cwd: ROOT,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
    return stdout;
  } catch (error) {
    const stdout = (error as { stdout?: string }).stdout;
    if (!stdout) throw error;
    return stdout;
  }
}

/** Prints the counts (warnings are not failures, but worth seeing) and lists the errors. */
function errorsOf(linter: string, problems: Problem[]): string {
  const errors = problems.filter((p) => p.severity === 'error');
  process.stdout.write(
    `${linter}: ${errors.length} errors, ${problems.length - errors.length} warnings\n`,
  );
  return errors.map((p) => `${p.severity} ${p.rule} ${p.where}: ${p.message}`).join('\n');
}

/**
 * Third-party tools accept the served document (docs/api.md): Redocly's recommended rules and
 * Spectral's `spectral:oas` (the repository's .spectral.yaml) find no error in it.
 */
describe('the served API document passes third-party linters', () => {
  let t: TestApp;
  let dir: string;
  let file: string;
  // Both run at once: Spectral alone takes most of the file's time.
  let redocly: Promise<string>;
  let spectral: Promise<string>;

  beforeAll(async () => {
    t = await startTestApp();
    const doc = await request(t.baseUrl, 'GET', '/docs-json');
    expect(doc.status).toBe(200);
    dir = mkdtempSync(join(tmpdir(), 'meb-docs-json-'));
    file = join(dir, 'docs.json');
    writeFileSync(file, JSON.stringify(doc.body));
    redocly = lint('redocly', ['lint', file, '--format=json']);
    spectral = lint('spectral', [
      'lint',
      file,
      '--ruleset',
      join(ROOT, '.spectral.yaml'),
      '--format=json',
      '--quiet',
    ]);
    // Awaited by the tests; a rejection is theirs to report.
    redocly.catch(() => undefined);
    spectral.catch(() => undefined);
  });
  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('redocly lint (recommended): no error', async () => {
    const report = JSON.parse(await redocly) as {
      problems: {
        severity: string;
        ruleId: string;
        message: string;
        location: { pointer: string }[];
      }[];
    };
    const problems = report.problems.map((p) => ({
      severity: p.severity,
      rule: p.ruleId,
      where: p.location.map((l) => l.pointer).join(' '),
      message: p.message,
    }));
    expect(errorsOf('redocly lint', problems)).toBe('');
  }, 180_000);

  it('spectral lint (spectral:oas): no error', async () => {
    const out = await spectral;
    // Spectral's severities: 0 error, 1 warning, 2 information, 3 hint.
    const problems = (
      JSON.parse(out) as { severity: number; code: string; message: string; path: string[] }[]
    ).map((p) => ({
      severity: ['error', 'warning', 'info', 'hint'][p.severity],
      rule: p.code,
      where: p.path.join('/'),
      message: p.message,
    }));
    expect(errorsOf('spectral lint', problems)).toBe('');
  }, 180_000);
});

/**
 * The benchmarks' npm scripts asked for help, as a newcomer asks: usage, exit 0, no stack (no
 * database or bench is touched). A name that is no bench is refused with the list.
 */
import { runNpmScript } from './support/npm-script';

// Each run loads a bench with ts-node (the app's modules too): half a minute on a loaded machine.
jest.setTimeout(120_000);

describe('npm run bench -- --help', () => {
  it('prints the usage with the bench names and exits 0', async () => {
    const help = runNpmScript('bench', ['--help']);
    expect(await help.exit).toBe(0);
    expect(help.output()).toMatch(
      /^Usage: npm run bench \[-- <name>\[,<name>…\]\] +\(names: pipeline, deployed, websocket, reconcile, attendance, accounts, partitions\)/,
    );
    expect(help.output()).not.toMatch(/Error|at .*\.ts:\d+/);
  });

  it('refuses a name that is no bench, listing the names, with exit 2', async () => {
    const wrong = runNpmScript('bench', ['pipline']);
    expect(await wrong.exit).toBe(2);
    expect(wrong.output()).toContain('npm run bench: no bench named pipline');
    expect(wrong.output()).toContain('names: pipeline, deployed, websocket, reconcile');
  });

  it("prints a single bench's arguments and its description (npm run bench:pipeline)", async () => {
    const help = runNpmScript('bench:pipeline', ['--help']);
    expect(await help.exit).toBe(0);
    expect(help.output()).toMatch(
      /^Usage: node -r ts-node\/register\/transpile-only bench\/pipeline\.ts \[events=5000\] \[concurrency=50\]/,
    );
    expect(help.output()).toContain(
      'The whole pipeline, POST /zoom/events → arrival at a subscriber',
    );
  });
});

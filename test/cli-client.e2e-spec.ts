import { runNpmScript } from './support/npm-script';
import { TestApp, startTestApp } from './support/test-app';

describe('the CLI’s generated client (src/cli/generated/api.ts)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t?.close());

  // openapi-typescript is ESM under its CommonJS entry, which Jest cannot load: the generator
  // runs as the npm script CI and developers run.
  it('is what `npm run client:generate` makes of the served /docs-json', async () => {
    const check = runNpmScript('client:generate', [t.baseUrl, '--check']);
    const code = await check.exit;
    expect({ code, output: check.output() }).toEqual({
      code: 0,
      output: `src/cli/generated/api.ts matches ${t.baseUrl}/docs-json\n`,
    });
  });
});

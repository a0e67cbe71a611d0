import { runNpmScript } from './support/npm-script';
import { TestApp, startTestApp } from './support/test-app';

describe('the CLI’s generated client (src/cli/generated/api.ts)', () => {
  let t: TestApp;

  // The document is written per deployment (docs/api.md): the client is made from one with a
  // broker of each type, so that it types broker destinations too (docs/development.md).
  beforeAll(async () => {
    t = await startTestApp({
      env: {
        APP_ROLE: 'api',
        DESTINATION_BROKERS: JSON.stringify([
          { name: 'bus', type: 'rabbitmq', url: 'amqp://guest:guest@127.0.0.1:5672' },
          { name: 'stream', type: 'nats', url: 'nats://127.0.0.1:4222' },
        ]),
      },
    });
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

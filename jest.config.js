/**
 * Four projects: unit specs beside the code, store contracts in test/stores (PostgreSQL and
 * the fakes), the web console's own logic (console/src, no browser: its pages are driven in
 * Chromium by test/console.e2e-spec.ts), and end-to-end specs in test/ against real
 * PostgreSQL and Redis.
 */
const tsJest = ['ts-jest', {}];

module.exports = {
  // An end-to-end test's budget: it may boot an app and wait on queues on a loaded machine.
  // Unit specs get less (test/support/unit-setup.ts); a slow unit spec is a bug to see.
  testTimeout: 60000,
  maxWorkers: 2,
  reporters: ['default', '<rootDir>/test/support/progress-reporter.js'],
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: 'src',
      testRegex: '.*\\.spec\\.ts$',
      setupFilesAfterEnv: ['<rootDir>/../test/support/unit-setup.ts'],
      transform: { '^.+\\.ts$': tsJest },
    },
    {
      // Store contracts: each store's cases against PostgreSQL and against its in-memory fake.
      displayName: 'medium',
      testEnvironment: 'node',
      rootDir: '.',
      testRegex: 'test/stores/.*\\.spec\\.ts$',
      transform: { '^.+\\.ts$': tsJest },
    },
    {
      displayName: 'console',
      testEnvironment: 'node',
      rootDir: 'console',
      testRegex: 'src/.*\\.spec\\.ts$',
      // The console's tsconfig is for the bundler (ES modules, DOM); Jest runs CommonJS.
      transform: {
        '^.+\\.tsx?$': [
          'ts-jest',
          {
            tsconfig: {
              module: 'commonjs',
              moduleResolution: 'node',
              target: 'ES2022',
              lib: ['ES2022', 'DOM'],
              strict: true,
              esModuleInterop: true,
              isolatedModules: true,
              types: ['node', 'jest'],
            },
          },
        ],
      },
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: '.',
      testRegex: 'test/.*\\.e2e-spec\\.ts$',
      transform: { '^.+\\.ts$': tsJest },
      // Every answer the apps give is checked against /docs-json after each file (SPEC §16).
      setupFilesAfterEnv: ['<rootDir>/test/support/response-contract.setup.ts'],
    },
  ],
};

/**
 * Three projects: unit specs beside the code, store contracts in test/stores (PostgreSQL and
 * the fakes), end-to-end specs in test/ against real PostgreSQL and Redis.
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
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: '.',
      testRegex: 'test/.*\\.e2e-spec\\.ts$',
      transform: { '^.+\\.ts$': tsJest },
    },
  ],
};

/** Two projects: unit specs beside the code, end-to-end specs in test/ against real PostgreSQL and Redis. */
const tsJest = ['ts-jest', {}];

module.exports = {
  testTimeout: 60000,
  maxWorkers: 2,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: 'src',
      testRegex: '.*\\.spec\\.ts$',
      transform: { '^.+\\.ts$': tsJest },
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

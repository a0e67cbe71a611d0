import { recordedProblems } from './response-contract';

/**
 * Run after every e2e spec file (jest.config.js setupFilesAfterEnv): the answers its apps gave,
 * held against their /docs-json (docs/api.md). A failure lists each route, status and schema path.
 */
afterAll(() => {
  const problems = recordedProblems();
  if (problems.length > 0) {
    throw new Error(
      `Answers that /docs-json does not document (docs/api.md):\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
  }
});

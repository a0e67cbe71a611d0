import { recordedProblems } from './response-contract';

/**
 * Run after every e2e spec file (jest.config.js setupFilesAfterEnv): the answers its apps gave,
 * held against their /docs-json (SPEC §16). A failure lists each route, status and schema path.
 */
afterAll(() => {
  const problems = recordedProblems();
  if (problems.length > 0) {
    throw new Error(
      `Answers that /docs-json does not document (SPEC §16):\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
  }
});

/**
 * One line per finished test file: how many of how many, what failed, and the time so far.
 * Jest's default reporter shows a running count only on a terminal; a run logged to a file
 * or a CI console (a busy machine's whole suite takes minutes) would otherwise show no
 * progress at all. It sits beside the default reporter and the --json results.
 */
const { relative } = require('node:path');

class ProgressReporter {
  constructor() {
    this.total = 0;
    this.done = 0;
    this.failedTests = 0;
    this.startedAt = Date.now();
  }

  onRunStart(results) {
    this.total = results.numTotalTestSuites;
    this.startedAt = Date.now();
  }

  onTestResult(test, result) {
    this.done++;
    this.failedTests += result.numFailingTests;
    const state = result.testExecError || result.numFailingTests > 0 ? 'FAIL' : 'pass';
    const seconds = (ms) => `${Math.round(ms / 1000)} s`;
    const file = relative(process.cwd(), test.path);
    process.stderr.write(
      `[${this.done}/${this.total}] ${state} ${file} (${seconds(result.perfStats.runtime)}); ` +
        `${this.failedTests} failed so far, ${seconds(Date.now() - this.startedAt)} elapsed\n`,
    );
  }
}

module.exports = ProgressReporter;

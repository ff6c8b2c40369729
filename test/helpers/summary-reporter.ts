/**
 * Prints one plain closing line, `vitest: N passed, N failed, N skipped`, after vitest's own
 * summary, so that CI can read the outcome of the run without parsing vitest's output.
 */
import type { Reporter, TestModule } from 'vitest/node';

/** Counts every test case of the run by its final state. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    const counts = { passed: 0, failed: unhandledErrors.length, skipped: 0 };
    for (const module of testModules) {
      let failedTests = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') counts.passed++;
        else if (state === 'failed') failedTests++;
        else counts.skipped++;
      }
      // A file that failed outside its tests (an import, a beforeAll) counts as one failure.
      counts.failed += module.state() === 'failed' ? Math.max(1, failedTests) : failedTests;
    }
    process.stdout.write(`\nvitest: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`);
  }
}

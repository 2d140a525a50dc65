// A vitest reporter that writes the errors caught outside any test to
// test-results/unhandled-errors.json: a rejection nobody awaited, an 'error' event nobody listened
// to, a worker that died or stopped answering. They fail the run (exit 1), yet vitest's JSON report
// leaves them out, so without this file scripts/test-summary.mjs would print "0 failed" for a
// package whose run failed, and CI's tail would not say why.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const FILE = ['test-results', 'unhandled-errors.json']

/** The first lines of a stack: enough to find the place, short enough for a log. */
function stackHead(stack) {
  return typeof stack === 'string' ? stack.split('\n').slice(0, 6).join('\n') : undefined
}

export default class UnhandledErrorsReporter {
  onInit(vitest) {
    this.file = join(vitest.config.root, ...FILE)
    // A file left by an earlier run must not be read as this run's.
    rmSync(this.file, { force: true })
  }

  onTestRunEnd(_modules, errors) {
    const found = errors.map((error) => ({
      name: typeof error?.name === 'string' ? error.name : 'Error',
      message: typeof error?.message === 'string' ? error.message : String(error),
      // Set by vitest when the error surfaced while a test file (and test) was running.
      testFile: error?.VITEST_TEST_PATH,
      testName: error?.VITEST_TEST_NAME,
      stack: stackHead(error?.stack ?? error?.stackStr),
    }))
    mkdirSync(join(this.file, '..'), { recursive: true })
    writeFileSync(this.file, `${JSON.stringify(found, null, 2)}\n`)
  }
}

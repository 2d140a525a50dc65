// Prints one closing line for the whole repository's tests, summed from each package's vitest
// JSON report: `Tests: N passed, N failed, N skipped`. Exits 1 when a report is missing or
// counts a failure, or when no test ran at all.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const root = new URL('..', import.meta.url).pathname
let passed = 0
let failed = 0
let skipped = 0
const missing = []
for (const group of ['packages', 'apps']) {
  for (const name of readdirSync(join(root, group))) {
    const dir = join(root, group, name)
    if (!existsSync(join(dir, 'vitest.config.ts'))) continue
    const report = join(dir, 'test-results', 'vitest.json')
    if (!existsSync(report)) {
      missing.push(`${group}/${name}`)
      continue
    }
    const result = JSON.parse(readFileSync(report, 'utf8'))
    passed += result.numPassedTests
    failed += result.numFailedTests
    skipped += result.numPendingTests + result.numTodoTests
    console.log(
      `${group}/${name}: ${result.numPassedTests} passed, ${result.numFailedTests} failed`,
    )
  }
}
if (missing.length > 0) console.log(`no test report from: ${missing.join(', ')}`)
console.log(`Tests: ${passed} passed, ${failed} failed, ${skipped} skipped`)
process.exitCode = failed > 0 || missing.length > 0 || passed === 0 ? 1 : 0

// Prints one closing line for the whole repository's tests, summed from each package's vitest
// JSON report: `Tests: N passed, N failed` (and `, N skipped` when some were). Exits 1, naming
// the package, when a report is missing or unreadable, counts no test, counts a failed test, or
// has a test file that failed outside any test (an import that threw, a failing hook), or when
// vitest caught an error outside any test (test-results/unhandled-errors.json): vitest counts none
// of those as a failed test, so `0 failed` alone proves nothing.
//
// Usage: node scripts/test-summary.mjs [ROOT]   (ROOT: the repository, by default this one)
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url))

/**
 * The workspace packages that have tests: `packages/*`, `apps/*` and `examples/*` with a vitest
 * config.
 */
function testedPackages() {
  const found = []
  for (const group of ['packages', 'apps', 'examples']) {
    if (!existsSync(join(root, group))) continue
    for (const name of readdirSync(join(root, group)).sort()) {
      if (existsSync(join(root, group, name, 'vitest.config.ts'))) found.push(`${group}/${name}`)
    }
  }
  return found
}

/** The first line of a message, short enough for one line of the summary. */
function firstLine(text) {
  const line = String(text ?? '')
    .split('\n', 1)[0]
    .trim()
  return line.length > 120 ? `${line.slice(0, 117)}...` : line
}

/**
 * The errors vitest caught outside any test, as scripts/vitest-unhandled-errors.mjs wrote them:
 * one line each, the first three named. They fail vitest's run but are not in its JSON report.
 */
function outsideTests(dir) {
  const file = join(root, dir, 'test-results', 'unhandled-errors.json')
  if (!existsSync(file)) return []
  let errors
  try {
    errors = JSON.parse(readFileSync(file, 'utf8'))
  } catch {
    return ['unreadable list of errors outside tests']
  }
  if (!Array.isArray(errors)) return ['unreadable list of errors outside tests']
  const lines = errors.slice(0, 3).map((error) => {
    const file =
      typeof error?.testFile === 'string' ? relative(join(root, dir), error.testFile) : ''
    const test = typeof error?.testName === 'string' ? ` › ${firstLine(error.testName)}` : ''
    const what = firstLine(`${String(error?.name ?? 'Error')}: ${String(error?.message ?? '')}`)
    return `error outside any test${file === '' ? '' : ` (during ${file}${test})`}: ${what}`
  })
  if (errors.length > 3) lines.push(`${errors.length - 3} more error(s) outside tests`)
  return lines
}

/** Reads one package's report: its counts and what is wrong with it. */
function summarise(dir) {
  const file = join(root, dir, 'test-results', 'vitest.json')
  if (!existsSync(file)) {
    return { passed: 0, failed: 0, skipped: 0, problems: ['no test report: its tests did not run'] }
  }
  let report
  try {
    report = JSON.parse(readFileSync(file, 'utf8'))
  } catch {
    return { passed: 0, failed: 0, skipped: 0, problems: ['unreadable test report'] }
  }
  const count = (value) => (Number.isInteger(value) && value > 0 ? value : 0)
  const passed = count(report.numPassedTests)
  const failedTests = count(report.numFailedTests)
  const skipped = count(report.numPendingTests) + count(report.numTodoTests)
  const problems = []
  const files = Array.isArray(report.testResults) ? report.testResults : []
  // A file that failed without a failed test: it threw on import, or a hook failed and its tests
  // were skipped. Each counts once among the failures.
  const brokenFiles = files.filter(
    (result) =>
      result?.status === 'failed' &&
      !(result.assertionResults ?? []).some((test) => test?.status === 'failed'),
  )
  for (const result of brokenFiles) {
    const name = relative(join(root, dir), String(result.name ?? '?'))
    const why = firstLine(result.message)
    problems.push(`${name} failed outside its tests${why === '' ? '' : `: ${why}`}`)
  }
  problems.push(...outsideTests(dir))
  if (failedTests > 0) problems.push(`${failedTests} failed test(s)`)
  if (passed + failedTests === 0) problems.push('no test ran')
  if (report.success !== true && problems.length === 0) {
    problems.push('vitest reported the run as failed')
  }
  return { passed, failed: failedTests + brokenFiles.length, skipped, problems }
}

let passed = 0
let failed = 0
let skipped = 0
let failing = 0
const packages = testedPackages()
if (packages.length === 0) {
  console.log(`FAILED: no package with tests under ${root}`)
  failing += 1
}
for (const dir of packages) {
  const result = summarise(dir)
  passed += result.passed
  failed += result.failed
  skipped += result.skipped
  const counts = `${result.passed} passed, ${result.failed} failed`
  const skips = result.skipped > 0 ? `, ${result.skipped} skipped` : ''
  if (result.problems.length === 0) {
    console.log(`${dir}: ${counts}${skips}`)
    continue
  }
  failing += 1
  console.log(`FAILED ${dir}: ${counts}${skips}`)
  for (const problem of result.problems) console.log(`  - ${problem}`)
}
if (failing > 0) console.log(`${failing} package(s) failed`)
console.log(`Tests: ${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`)
process.exitCode = failing > 0 || failed > 0 || passed === 0 ? 1 : 0

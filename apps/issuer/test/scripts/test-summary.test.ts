import { spawnSync } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { tempDir } from '../support/issuer.js'

const SCRIPT = fileURLToPath(new URL('../../../../scripts/test-summary.mjs', import.meta.url))

interface FileResult {
  name: string
  status: 'passed' | 'failed'
  message?: string
  tests: ('passed' | 'failed' | 'skipped')[]
}

/** A vitest JSON report as the json reporter writes it, for the files given. */
function report(files: FileResult[], success?: boolean): object {
  const tests = files.flatMap((file) => file.tests)
  const failedFiles = files.filter((file) => file.status === 'failed').length
  return {
    numTotalTestSuites: files.length,
    numPassedTestSuites: files.length - failedFiles,
    numFailedTestSuites: failedFiles,
    numPendingTestSuites: 0,
    numTotalTests: tests.length,
    numPassedTests: tests.filter((t) => t === 'passed').length,
    numFailedTests: tests.filter((t) => t === 'failed').length,
    numPendingTests: tests.filter((t) => t === 'skipped').length,
    numTodoTests: 0,
    startTime: 0,
    success: success ?? (failedFiles === 0 && !tests.includes('failed')),
    testResults: files.map((file) => ({
      name: file.name,
      status: file.status,
      message: file.message ?? '',
      startTime: 0,
      endTime: 1,
      assertionResults: file.tests.map((status, i) => ({
        title: `test ${i}`,
        fullName: `test ${i}`,
        ancestorTitles: [],
        status,
        failureMessages: status === 'failed' ? ['expected 1 to be 2'] : [],
      })),
    })),
  }
}

describe('scripts/test-summary.mjs', () => {
  let tmp: ReturnType<typeof tempDir>
  beforeEach(() => {
    tmp = tempDir()
  })
  afterEach(() => tmp.remove())

  /** A package with tests; `content` undefined leaves its report missing. */
  function pkg(dir: string, content?: object | string): void {
    const path = join(tmp.dir, dir)
    mkdirSync(join(path, 'test-results'), { recursive: true })
    writeFileSync(join(path, 'vitest.config.ts'), 'export default {}\n')
    const file = join(path, 'test-results', 'vitest.json')
    if (content === undefined) rmSync(file, { force: true })
    else writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content))
  }

  function summary(): { status: number | null; lines: string[]; last: string } {
    const result = spawnSync(process.execPath, [SCRIPT, tmp.dir], { encoding: 'utf8' })
    expect(result.stderr).toBe('')
    const lines = result.stdout.trimEnd().split('\n')
    return { status: result.status, lines, last: lines[lines.length - 1] ?? '' }
  }

  const ok = (name: string, tests: FileResult['tests'] = ['passed', 'passed']): FileResult => ({
    name: `/r/${name}`,
    status: 'passed',
    tests,
  })

  it('passes when every package ran tests and none failed', () => {
    pkg('packages/a', report([ok('a.test.ts')]))
    pkg('apps/b', report([ok('b.test.ts', ['passed', 'skipped'])]))
    const { status, lines, last } = summary()
    expect(status).toBe(0)
    expect(lines).toContain('packages/a: 2 passed, 0 failed')
    expect(lines).toContain('apps/b: 1 passed, 0 failed, 1 skipped')
    expect(last).toBe('Tests: 3 passed, 0 failed, 1 skipped')
  })

  it('fails on files that failed before any test ran, with success: false, naming them', () => {
    pkg('packages/a', report([ok('a.test.ts')]))
    pkg(
      'apps/issuer',
      report([
        ok('fine.test.ts'),
        {
          name: join(tmp.dir, 'apps/issuer/test/import.test.ts'),
          status: 'failed',
          message: 'Cannot find package "playwright-core"\n    at somewhere',
          tests: [],
        },
        {
          name: join(tmp.dir, 'apps/issuer/test/hook.test.ts'),
          status: 'failed',
          tests: ['skipped'],
        },
      ]),
    )
    const { status, lines, last } = summary()
    expect(status).toBe(1)
    expect(lines).toContain('FAILED apps/issuer: 2 passed, 2 failed, 1 skipped')
    expect(lines).toContain(
      '  - test/import.test.ts failed outside its tests: Cannot find package "playwright-core"',
    )
    expect(lines).toContain('  - test/hook.test.ts failed outside its tests')
    expect(last).toBe('Tests: 4 passed, 2 failed, 1 skipped')
  })

  it('fails on a failed test, naming the package', () => {
    pkg('packages/a', report([ok('a.test.ts')]))
    pkg(
      'packages/b',
      report([{ name: '/r/b.test.ts', status: 'failed', tests: ['passed', 'failed'] }]),
    )
    const { status, lines, last } = summary()
    expect(status).toBe(1)
    expect(lines).toContain('FAILED packages/b: 1 passed, 1 failed')
    expect(lines).toContain('  - 1 failed test(s)')
    expect(last).toBe('Tests: 3 passed, 1 failed')
  })

  it('fails on success: false even when every count looks fine', () => {
    pkg('packages/a', report([ok('a.test.ts')], false))
    const { status, lines } = summary()
    expect(status).toBe(1)
    expect(lines).toContain('  - vitest reported the run as failed')
  })

  it('fails on errors caught outside any test, naming the first three and where they arose', () => {
    pkg('packages/a', report([ok('a.test.ts')]))
    pkg('packages/store', report([ok('s.test.ts')]))
    const errors = [
      {
        name: 'Error',
        message: 'write EPIPE\n    at afterWriteDispatched',
        testFile: join(tmp.dir, 'packages/store/src/postgres.test.ts'),
        testName: 'races two replicas',
      },
      { name: 'Error', message: '[vitest-worker]: Timeout calling "onTaskUpdate"' },
      { name: 'TypeError', message: 'x is not a function' },
      { name: 'Error', message: 'a fourth' },
    ]
    writeFileSync(
      join(tmp.dir, 'packages/store/test-results/unhandled-errors.json'),
      JSON.stringify(errors),
    )
    writeFileSync(join(tmp.dir, 'packages/a/test-results/unhandled-errors.json'), '[]')
    const { status, lines, last } = summary()
    expect(status).toBe(1)
    expect(lines).toContain('packages/a: 2 passed, 0 failed')
    expect(lines).toContain('FAILED packages/store: 2 passed, 0 failed')
    expect(lines).toContain(
      '  - error outside any test (during src/postgres.test.ts › races two replicas): Error: write EPIPE',
    )
    expect(lines).toContain(
      '  - error outside any test: Error: [vitest-worker]: Timeout calling "onTaskUpdate"',
    )
    expect(lines).toContain('  - error outside any test: TypeError: x is not a function')
    expect(lines).toContain('  - 1 more error(s) outside tests')
    expect(lines).toContain('1 package(s) failed')
    expect(last).toBe('Tests: 4 passed, 0 failed')
  })

  it('fails on a garbled list of errors outside tests', () => {
    pkg('packages/a', report([ok('a.test.ts')]))
    writeFileSync(join(tmp.dir, 'packages/a/test-results/unhandled-errors.json'), '{"x":')
    const { status, lines } = summary()
    expect(status).toBe(1)
    expect(lines).toContain('  - unreadable list of errors outside tests')
  })

  it('fails on a missing or unreadable report, naming the package', () => {
    pkg('packages/a', report([ok('a.test.ts')]))
    pkg('packages/missing')
    pkg('apps/garbled', '{"numPassedTests": 3,')
    const { status, lines, last } = summary()
    expect(status).toBe(1)
    expect(lines).toContain('FAILED packages/missing: 0 passed, 0 failed')
    expect(lines).toContain('  - no test report: its tests did not run')
    expect(lines).toContain('FAILED apps/garbled: 0 passed, 0 failed')
    expect(lines).toContain('  - unreadable test report')
    expect(lines).toContain('2 package(s) failed')
    expect(last).toBe('Tests: 2 passed, 0 failed')
  })

  it('fails on a package whose tests were all skipped, or that has none', () => {
    pkg('packages/a', report([ok('a.test.ts')]))
    pkg('packages/skipped', report([ok('s.test.ts', ['skipped', 'skipped'])]))
    pkg('packages/empty', report([]))
    const { status, lines, last } = summary()
    expect(status).toBe(1)
    expect(lines).toContain('FAILED packages/skipped: 0 passed, 0 failed, 2 skipped')
    expect(lines).toContain('FAILED packages/empty: 0 passed, 0 failed')
    expect(lines.filter((line) => line === '  - no test ran')).toHaveLength(2)
    expect(last).toBe('Tests: 2 passed, 0 failed, 2 skipped')
  })

  it('fails when no package has tests at all', () => {
    const { status, last } = summary()
    expect(status).toBe(1)
    expect(last).toBe('Tests: 0 passed, 0 failed')
  })
})

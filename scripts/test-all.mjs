// `pnpm test` once its prerequisites are there: every check CI runs, then one summary. Every step
// runs even when an earlier one failed, so that the summary is always printed and always last.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))

// A report left by an earlier run would be counted as this run's when a suite cannot start.
for (const group of ['packages', 'apps', 'examples']) {
  for (const name of readdirSync(join(root, group))) {
    for (const report of ['vitest.json', 'unhandled-errors.json']) {
      const file = join(root, group, name, 'test-results', report)
      if (existsSync(file)) rmSync(file)
    }
  }
}

const run = (command, args) =>
  spawnSync(command, args, { cwd: root, stdio: 'inherit' }).status === 0

const failed = []
if (!run('turbo', ['run', 'build', 'typecheck', 'lint', 'test', '--continue'])) {
  failed.push('turbo run build typecheck lint test (see the failed tasks above)')
}
if (!run('prettier', ['--check', '.'])) failed.push('prettier --check . (run pnpm format)')
for (const step of failed) console.log(`FAILED: ${step}`)
const summary = run(process.execPath, [join(root, 'scripts', 'test-summary.mjs')])
process.exitCode = summary && failed.length === 0 ? 0 : 1

import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const REPO = fileURLToPath(new URL('../../../../', import.meta.url))
const { scripts } = JSON.parse(readFileSync(`${REPO}package.json`, 'utf8')) as {
  scripts: Record<string, string>
}

describe('the root scripts', () => {
  it('pnpm test checks its prerequisites first, then runs every check and the summary', () => {
    expect(scripts.test).toBe('node scripts/test-prerequisites.mjs && node scripts/test-all.mjs')
    const all = readFileSync(`${REPO}scripts/test-all.mjs`, 'utf8')
    for (const step of ["'typecheck'", "'lint'", "'test'", "'--continue'", "'prettier'"]) {
      expect(all).toContain(step)
    }
  })

  it('pnpm start shows the build as it goes instead of a silent minute', () => {
    const build = /turbo run build ([^&]*)&&/.exec(scripts.start ?? '')?.[1] ?? ''
    expect(build).toContain('--output-logs=new-only')
    expect(scripts.start).toMatch(/^echo '[^']*Building/)
  })

  it('the prerequisites step passes on this machine, which has what the tests need', () => {
    // The suites that follow need Chromium and PostgreSQL; if this fails, so would they.
    const out = execFileSync(process.execPath, [`${REPO}scripts/test-prerequisites.mjs`], {
      encoding: 'utf8',
    })
    expect(out).toBe('')
  })

  it('.ci/run installs only pnpm and its build tools, then runs the README command', () => {
    const run = readFileSync(`${REPO}.ci/run`, 'utf8')
    const commands = run.split('\n').filter((line) => !/^\s*(#|$)/.test(line))
    expect(commands[commands.length - 1]).toBe('pnpm test')
    expect(run).toContain('pnpm install --frozen-lockfile')
    expect(run).not.toMatch(/chromium|postgresql|pg_ctlcluster/)
  })
})

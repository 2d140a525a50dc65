import { SETTING_NAMES } from '@tessera/config-schema'
import { describe, expect, it } from 'vitest'
import { readRepoFile } from '../deploy/manifests.js'

const README = readRepoFile('README.md')

describe('README.md', () => {
  it('stays under 200 lines, with the diagram and the two commands before the walk-through', () => {
    expect(README.split('\n').length).toBeLessThan(200)
    const diagram = README.indexOf('```mermaid\n')
    const install = README.indexOf('pnpm install && pnpm start')
    const test = README.indexOf('```sh\npnpm test\n```')
    const walkThrough = README.indexOf('\n## Walk-through\n')
    expect(diagram).toBeGreaterThan(-1)
    expect([diagram < install, install < test, test < walkThrough]).toEqual([true, true, true])
  })

  it('names every setting in its settings table', () => {
    const start = README.indexOf('\n## Settings\n')
    const table = README.slice(start, README.indexOf('\n## ', start + 1))
    const named = new Set([...table.matchAll(/`([A-Z][A-Z_]+)`/g)].map((match) => match[1]!))
    expect(SETTING_NAMES.filter((name) => !named.has(name))).toEqual([])
  })

  it('links the docs index, the verifier, deployment, migration and benchmarks', () => {
    for (const target of [
      'docs/README.md',
      'packages/verifier/README.md',
      'docs/deploy.md',
      'docs/migration.md',
      'docs/benchmarks.md',
    ]) {
      expect(README).toContain(`](${target})`)
    }
  })
})

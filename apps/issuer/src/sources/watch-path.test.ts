import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { watchPath } from './watch-path.js'

// Longer than the watcher's debounce (300 ms), so that a burst has been reported by then.
const SETTLED_MS = 700
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, SETTLED_MS))

describe('watchPath', () => {
  let dir: string
  let stop: () => void = () => undefined
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-watch-'))
  })
  afterEach(() => {
    stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('reports changes in sub-folders, but none inside node_modules', async () => {
    mkdirSync(join(dir, 'app', 'node_modules', 'some-package'), { recursive: true })
    mkdirSync(join(dir, 'tenants'))
    const bursts: (string[] | undefined)[] = []
    stop = watchPath(
      dir,
      (changed) => bursts.push(changed && [...changed]),
      pino({ level: 'silent' }),
    )

    writeFileSync(join(dir, 'app', 'node_modules', 'some-package', 'config.yaml'), 'a: 1\n')
    await settle()
    expect(bursts).toEqual([])

    // The change beside it is reported: the watcher was listening all along.
    writeFileSync(join(dir, 'tenants', 'acme.yaml'), 'name: acme\n')
    for (let waited = 0; bursts.length === 0 && waited < 5_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(bursts).toEqual([[join('tenants', 'acme.yaml')]])
  })
})

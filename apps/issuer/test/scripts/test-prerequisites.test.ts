import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'

/** What the probes of scripts/test-prerequisites.mjs report. */
interface State {
  root: boolean
  apt: boolean
  chromiumPath: string
  chromium: boolean
  postgresAt: string
  postgresExternal: boolean
  postgresVersion: string | undefined
  postgresReady: boolean
}

interface Plan {
  install: string[]
  startPostgres: boolean
  missing: string | undefined
}

interface Prerequisites {
  plan: (state: State) => Plan
  prepare: (io: {
    probe: () => Promise<State>
    act: (step: string[]) => boolean
    log: (line: string) => void
  }) => Promise<string | undefined>
}

// A plain .mjs script (it runs before anything is built): imported by URL, typed here.
const script = new URL('../../../../scripts/test-prerequisites.mjs', import.meta.url)
const { plan, prepare } = (await import(pathToFileURL(script.pathname).href)) as Prerequisites

/** A Debian machine, as root, with everything there. */
const ready: State = {
  root: true,
  apt: true,
  chromiumPath: '/usr/bin/chromium',
  chromium: true,
  postgresAt: '127.0.0.1:5432',
  postgresExternal: false,
  postgresVersion: '15',
  postgresReady: true,
}

describe('scripts/test-prerequisites.mjs decisions', () => {
  it('does nothing when everything is there', () => {
    expect(plan(ready)).toEqual({ install: [], startPostgres: false, missing: undefined })
    expect(plan({ ...ready, root: false, apt: false })).toEqual({
      install: [],
      startPostgres: false,
      missing: undefined,
    })
  })

  it('as root with apt: installs what is missing, and starts PostgreSQL it installed', () => {
    expect(plan({ ...ready, chromium: false })).toEqual({
      install: ['chromium'],
      startPostgres: false,
      missing: undefined,
    })
    expect(
      plan({ ...ready, chromium: false, postgresVersion: undefined, postgresReady: false }),
    ).toEqual({ install: ['chromium', 'postgresql'], startPostgres: true, missing: undefined })
  })

  it('as root: starts an installed PostgreSQL that is down, installing nothing', () => {
    expect(plan({ ...ready, postgresReady: false })).toEqual({
      install: [],
      startPostgres: true,
      missing: undefined,
    })
  })

  it('not root: stops with one line naming what is missing and the command', () => {
    const result = plan({
      ...ready,
      root: false,
      chromium: false,
      postgresVersion: undefined,
      postgresReady: false,
    })
    expect(result.install).toEqual([])
    expect(result.startPostgres).toBe(false)
    expect(result.missing).toBe(
      'pnpm test cannot run: missing Chromium (/usr/bin/chromium), PostgreSQL; ' +
        'to fix: sudo apt-get install -y chromium postgresql',
    )
    const down = plan({ ...ready, root: false, postgresReady: false }).missing
    expect(down).toBe(
      'pnpm test cannot run: missing a running PostgreSQL at 127.0.0.1:5432; ' +
        'to fix: sudo pg_ctlcluster --skip-systemctl-redirect 15 main start',
    )
  })

  it('without apt-get: names the Debian command as a hint, one line', () => {
    const { missing } = plan({ ...ready, apt: false, chromium: false })
    expect(missing).toBe(
      'pnpm test cannot run: missing Chromium (/usr/bin/chromium); ' +
        'to fix: install chromium (Debian: apt-get install -y chromium)',
    )
    expect(missing).not.toContain('\n')
  })

  it('does not install for a CHROMIUM_PATH or a TESSERA_TEST_POSTGRES_URL it cannot fix', () => {
    const result = plan({
      ...ready,
      chromiumPath: '/opt/chrome/chrome',
      chromium: false,
      postgresExternal: true,
      postgresAt: 'db.internal:5433',
      postgresReady: false,
    })
    expect(result.install).toEqual([])
    expect(result.missing).toBe(
      'pnpm test cannot run: missing Chromium at CHROMIUM_PATH=/opt/chrome/chrome, PostgreSQL at ' +
        'db.internal:5433 (TESSERA_TEST_POSTGRES_URL); to fix: point CHROMIUM_PATH at a ' +
        'Chromium executable && start that server, or unset TESSERA_TEST_POSTGRES_URL',
    )
  })

  it('installs nothing when something else must be fixed by hand first', () => {
    const result = plan({
      ...ready,
      chromium: false,
      postgresExternal: true,
      postgresReady: false,
    })
    expect(result.install).toEqual([])
    expect(result.missing).toContain('TESSERA_TEST_POSTGRES_URL')
  })
})

describe('scripts/test-prerequisites.mjs steps', () => {
  /** A machine whose state the steps change, as apt-get and pg_ctlcluster would. */
  function machine(initial: State, { installWorks = true } = {}) {
    let state = { ...initial }
    const steps: string[] = []
    const logs: string[] = []
    const act = (step: string[]): boolean => {
      steps.push(step.join(' '))
      if (step[0] === 'apt-get' && step[1] === 'install') {
        if (!installWorks) return false
        if (step.includes('chromium')) state = { ...state, chromium: true }
        if (step.includes('postgresql')) state = { ...state, postgresVersion: '15' }
      }
      if (step[0] === 'pg_ctlcluster' && step.includes('start')) {
        state = { ...state, postgresReady: true }
      }
      return true
    }
    const io = { probe: () => Promise.resolve(state), act, log: (line: string) => logs.push(line) }
    return { io, steps, logs }
  }

  it('updates apt once, installs both, trusts loopback on the new cluster, starts it', async () => {
    const { io, steps, logs } = machine({
      ...ready,
      chromium: false,
      postgresVersion: undefined,
      postgresReady: false,
    })
    expect(await prepare(io)).toBeUndefined()
    expect(steps).toEqual([
      'apt-get update -qq',
      'apt-get install -y -qq chromium postgresql',
      'tessera:trust-loopback',
      'pg_ctlcluster --skip-systemctl-redirect 15 main start',
    ])
    expect(logs).toEqual([
      'pnpm test: installing chromium postgresql (apt-get)',
      'pnpm test: starting PostgreSQL 15',
    ])
  })

  it('only starts a stopped cluster, touching neither apt nor its configuration', async () => {
    const { io, steps } = machine({ ...ready, postgresReady: false })
    expect(await prepare(io)).toBeUndefined()
    expect(steps).toEqual(['pg_ctlcluster --skip-systemctl-redirect 15 main start'])
  })

  it('runs nothing when all is there', async () => {
    const { io, steps, logs } = machine(ready)
    expect(await prepare(io)).toBeUndefined()
    expect(steps).toEqual([])
    expect(logs).toEqual([])
  })

  it('says so in one line when apt-get fails', async () => {
    const { io } = machine({ ...ready, chromium: false }, { installWorks: false })
    expect(await prepare(io)).toBe(
      'pnpm test cannot run: apt-get install chromium failed; run it to see why',
    )
  })

  it('reports what is still missing after the steps, with the command', async () => {
    const { io } = machine({ ...ready, postgresReady: false })
    io.act = () => true // the start "succeeds" but the server never answers
    expect(await prepare(io)).toBe(
      'pnpm test cannot run: missing a running PostgreSQL at 127.0.0.1:5432; ' +
        'to fix: sudo pg_ctlcluster --skip-systemctl-redirect 15 main start',
    )
  })
})

import type { ConfigFile, Tenant } from '@tessera/config-schema'
import { describe, expect, it } from 'vitest'
import { planReload } from './plan.js'

const tenant = (name: string, providers: string[] = ['/c/users.mjs'], hosts = [`${name}.test`]) =>
  ({ name, providers, hosts }) as unknown as Tenant
const file = (name: string, tenants: Tenant[]): ConfigFile => ({ file: name, tenants, issues: [] })

describe('planReload', () => {
  const a = tenant('a')
  const b = tenant('b', ['/c/other.mjs'])
  const served = new Map([
    ['a', a],
    ['b', b],
  ])
  const lastGood = (name: string) =>
    ({ '/c/a.yaml': file('/c/a.yaml', [a]), '/c/b.yaml': file('/c/b.yaml', [b]) })[name]
  const none = { removed: [], lastGood, served, all: false, other: [] }

  it('builds the changed tenants only, and removes the ones their files dropped', () => {
    const moved = tenant('a', ['/c/users.mjs'], ['moved.test'])
    const plan = planReload({
      ...none,
      accepted: [
        { name: '/c/a.yaml', file: file('/c/a.yaml', [moved, tenant('c')]) },
        { name: '/c/b.yaml', file: file('/c/b.yaml', [b]) },
      ],
    })
    expect([...plan.put.keys()]).toEqual(['a', 'c'])
    expect(plan.remove).toEqual([])
    expect(plan).toMatchObject({ fresh: false, left: 3 })

    const gone = planReload({ ...none, accepted: [], removed: ['/c/b.yaml'] })
    expect(gone).toMatchObject({ remove: ['b'], left: 1 })
    expect(gone.put.size).toBe(0)
  })

  it('on SIGHUP, rebuilds every tenant with fresh provider scripts', () => {
    const plan = planReload({ ...none, accepted: [], all: true })
    expect([...plan.put.keys()]).toEqual(['a', 'b'])
    expect(plan.fresh).toBe(true)
  })

  it('rebuilds the tenants of a changed provider script, and every tenant for another file', () => {
    const script = planReload({ ...none, accepted: [], other: ['/c/other.mjs'] })
    expect([...script.put.keys()]).toEqual(['b'])
    expect(script.fresh).toBe(true)
    const other = planReload({ ...none, accepted: [], other: ['/c/notes.txt'] })
    expect([...other.put.keys()]).toEqual(['a', 'b'])
  })

  it('counts the tenants left when every file is removed', () => {
    const plan = planReload({ ...none, accepted: [], removed: ['/c/a.yaml', '/c/b.yaml'] })
    expect(plan.left).toBe(0)
  })
})

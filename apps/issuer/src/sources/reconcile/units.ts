/**
 * Units: the parts of a reload that are built or refused as a whole. The files between which a
 * tenant moves are one unit, found with disjoint sets (union-find).
 *
 * @module
 */
import type { ConfigFile, Tenant } from '@tessera/config-schema'

/**
 * A part of a reload built or refused as a whole: the tenants of one changed or removed file (or
 * of files a tenant moves between), or one tenant rebuilt alone (a changed provider script,
 * SIGHUP).
 */
export interface Unit {
  /** The changed or removed files; empty for a tenant rebuilt alone. */
  files: string[]
  put: Tenant[]
  remove: string[]
}

/** Disjoint sets of keys: `union` joins two sets, `root` names the set of a key. */
export interface DisjointSets<K> {
  /** The key that stands for the set of `key` (`key` itself while it is alone). */
  root(key: K): K
  /** Joins the sets of `a` and `b`. */
  union(a: K, b: K): void
}

export function createDisjointSets<K>(): DisjointSets<K> {
  const parent = new Map<K, K>()
  // A loop, not recursion: thousands of files may pass tenants along in one change.
  const root = (key: K): K => {
    let top = key
    for (let up = parent.get(top); up !== undefined; up = parent.get(top)) top = up
    for (let at = key; at !== top;) {
      const up = parent.get(at) ?? top
      parent.set(at, top)
      at = up
    }
    return top
  }
  return {
    root,
    union(a, b) {
      const [x, y] = [root(a), root(b)]
      if (x !== y) parent.set(x, y)
    },
  }
}

/** What {@link unitsOf} splits: the files of a reload and the tenants it puts and removes. */
export interface UnitsInput {
  /** The changed files taken, each with its new version. */
  accepted: readonly { name: string; file: ConfigFile }[]
  /** The files removed. */
  removed: readonly string[]
  /** The tenants to build, by name. */
  put: ReadonlyMap<string, Tenant>
  /** The tenants to stop serving. */
  remove: readonly string[]
  /** The last good version of a file, whose tenants are served. */
  lastGood: (file: string) => ConfigFile | undefined
}

/**
 * Splits a reload's `put` and `remove` into units. The files between which a tenant moves are
 * one unit: taken apart, the tenant would end up served twice or by no file. Units with nothing
 * to build are left out (they cannot fail); the ones that add tenants come first, so that a
 * removal is tried after what replaces it.
 */
export function unitsOf({ accepted, removed, put, remove, lastGood }: UnitsInput): Unit[] {
  const files = [...accepted.map((change) => change.name), ...removed]
  /** Tenant name to the file of its last good version, and to the file that has it now. */
  const from = new Map<string, string>()
  for (const name of files)
    for (const tenant of lastGood(name)?.tenants ?? []) from.set(tenant.name, name)
  const to = new Map<string, string>()
  for (const { name, file } of accepted)
    for (const tenant of file.tenants) to.set(tenant.name, name)

  const sets = createDisjointSets<string>()
  for (const [tenant, file] of to) {
    const old = from.get(tenant)
    if (old !== undefined) sets.union(old, file)
  }
  const byRoot = new Map<string, Unit>()
  const unitOf = (file: string): Unit => {
    const key = sets.root(file)
    let unit = byRoot.get(key)
    if (unit === undefined) {
      unit = { files: [], put: [], remove: [] }
      byRoot.set(key, unit)
    }
    return unit
  }
  for (const name of files) unitOf(name).files.push(name)
  const alone: Unit[] = []
  for (const [name, tenant] of put) {
    const file = to.get(name)
    if (file === undefined) alone.push({ files: [], put: [tenant], remove: [] })
    else unitOf(file).put.push(tenant)
  }
  for (const name of remove) {
    const file = from.get(name)
    if (file === undefined) alone.push({ files: [], put: [], remove: [name] })
    else unitOf(file).remove.push(name)
  }
  const units = [...byRoot.values(), ...alone].filter(
    (unit) => unit.put.length > 0 || unit.remove.length > 0,
  )
  const removing = (unit: Unit): boolean => unit.remove.length > unit.put.length
  return [...units.filter((unit) => !removing(unit)), ...units.filter(removing)]
}

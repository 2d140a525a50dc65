/**
 * Admission against the index: which changed files of a reload may claim their names, hosts and
 * client_ids, given what the files that stay claim. Works on a config-schema `ConfigIndex`, in
 * time proportional to the files changed, however many the index holds.
 *
 * @module
 */
import { formatConfigIssue } from '@tessera/config-schema'
import type { ConfigFile, ConfigIndex } from '@tessera/config-schema'

/** A changed file: its name as shown in issues, and its new version. */
export interface Change {
  name: string
  file: ConfigFile
}

/** What {@link admitChanges} decides. */
export interface Admission<C extends Change> {
  /** The changes whose new version the index now holds, in the order given. */
  accepted: C[]
  /** The files refused, with every problem, one line each; in the order found. */
  refused: Map<string, string[]>
  /**
   * Gives the index back its state before the admission as far as the accepted and removed
   * files go: their new versions out, their last good versions in.
   */
  undo: () => void
}

/**
 * Admits the new versions of `changed` in place of their last good versions, and releases the
 * last good versions of `removed`. A file with problems of its own is refused, with its clashes
 * against the files that stay. A file that clashes is refused; a refused file's last good version
 * keeps its names and hosts, so the refused files' last good versions claim first and the others
 * are checked again until none clashes. `lastGood` answers the version whose tenants are served.
 */
export function admitChanges<C extends Change>(
  index: ConfigIndex,
  changed: readonly C[],
  removed: readonly string[],
  lastGood: (name: string) => ConfigFile | undefined,
): Admission<C> {
  // The tenants of changed and removed files leave the index; a refused file's last good
  // version goes back in, and a file is accepted only against what stays.
  for (const name of [...changed.map((c) => c.name), ...removed]) {
    const previous = lastGood(name)
    if (previous !== undefined) index.release(previous)
  }
  const refused = new Map<string, string[]>()
  for (const { name, file } of changed) {
    if (file.issues.length === 0) continue
    // Refused already; its clashes with the files that stay are worth saying in the same go.
    const clashes = index.admit(file)
    index.release(file)
    const issues = [...file.issues, ...clashes].sort((a, b) => a.line - b.line)
    refused.set(name, issues.map(formatConfigIssue))
  }
  const readmitted = new Set<string>()
  let accepted: C[]
  for (;;) {
    for (const name of refused.keys()) {
      const previous = lastGood(name)
      if (previous !== undefined && !readmitted.has(name)) index.admit(previous)
      readmitted.add(name)
    }
    accepted = []
    let clash = false
    for (const change of changed) {
      if (refused.has(change.name)) continue
      const issues = index.admit(change.file)
      if (issues.length === 0) {
        accepted.push(change)
        continue
      }
      // Refused: its last good version keeps its names and hosts, which may be what a file
      // accepted before it in this pass took. Check those again without it.
      index.release(change.file)
      refused.set(change.name, issues.map(formatConfigIssue))
      clash = true
      break
    }
    if (!clash) break
    for (const { file } of accepted) index.release(file)
  }
  const taken = accepted
  return {
    accepted: taken,
    refused,
    undo: () => {
      for (const { file } of taken) index.release(file)
      for (const name of [...taken.map((c) => c.name), ...removed]) {
        const previous = lastGood(name)
        if (previous !== undefined) index.admit(previous)
      }
    },
  }
}

/** A refused file whose last good version clashes with a file taken, and the clashes. */
export interface LastGoodClash {
  name: string
  problems: string[]
}

/**
 * The refused files' last good versions claim their names, hosts and client_ids again, once
 * every refused file has released its new version (two refused files may have traded a host).
 * A file taken may hold what a refused file's last good version claims (a host the new version
 * gave up, taken by another file in the same change): the file taken keeps it, as the issuer
 * already serves it there, and the clash is answered. The refused file's tenants serve the rest.
 * `accepted` are the changes {@link admitChanges} accepted; `refusedFiles` the ones of them that
 * could not be built after all.
 */
export function readmitLastGood(
  index: ConfigIndex,
  accepted: readonly Change[],
  refusedFiles: ReadonlySet<string>,
  lastGood: (name: string) => ConfigFile | undefined,
): LastGoodClash[] {
  for (const { name, file } of accepted) if (refusedFiles.has(name)) index.release(file)
  const clashes: LastGoodClash[] = []
  for (const name of refusedFiles) {
    const previous = lastGood(name)
    if (previous === undefined) continue
    const found = index.admit(previous)
    if (found.length > 0) clashes.push({ name, problems: found.map(formatConfigIssue) })
  }
  return clashes
}

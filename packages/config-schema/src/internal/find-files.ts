/**
 * Finds the YAML files of a configuration directory.
 *
 * @module
 */
import { readdir, realpath, stat } from 'node:fs/promises'
import { join } from 'node:path'

const YAML_FILE = /\.ya?ml$/i

/**
 * Every `*.yaml` and `*.yml` file under `folder`, recursively, as paths relative to it, sorted
 * by code unit so the order (and so which of two duplicates is reported) never depends on the
 * file system or the locale.
 *
 * Entries whose name starts with a dot are skipped: a Kubernetes ConfigMap volume holds each file
 * three times (`x.yaml`, `..data/x.yaml`, `..2024_01_01_00_00_00.123/x.yaml`), and editors leave
 * hidden backups. Folders named `node_modules` are skipped too: a directory of tenants may hold a
 * small app with its dependencies (`examples/` does), whose packages ship YAML of their own.
 * Symbolic links are followed, each real directory visited once.
 */
export async function findYamlFiles(folder: string): Promise<string[]> {
  const found: string[] = []
  const visited = new Set<string>()

  const walk = async (relative: string): Promise<void> => {
    const absolute = join(folder, relative)
    const real = await realpath(absolute)
    if (visited.has(real)) return
    visited.add(real)
    const entries = await readdir(absolute, { withFileTypes: true })
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue
      const path = relative === '' ? entry.name : join(relative, entry.name)
      let isDirectory = entry.isDirectory()
      let isFile = entry.isFile()
      if (entry.isSymbolicLink()) {
        const target = await stat(join(folder, path)).catch(() => undefined)
        isDirectory = target?.isDirectory() ?? false
        // A dangling link to a YAML file is kept, so that reading it reports the problem.
        isFile = target?.isFile() ?? true
      }
      if (isDirectory) {
        if (entry.name !== 'node_modules') await walk(path)
      } else if (isFile && YAML_FILE.test(entry.name)) found.push(path)
    }
  }

  await walk('')
  return found.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}

/**
 * Maps a field path to the line of its YAML node, for issues that point at the real line.
 *
 * @module
 */
import { isAlias, isMap, isNode, isScalar, isSeq } from 'yaml'
import type { Document, LineCounter } from 'yaml'
import type { FieldPath } from './issues.js'

/**
 * Returns `locate(path)`: the 1-based line of the node at `path` in `document`, or of the nearest
 * parent that exists (a missing key is reported on the line of the mapping that lacks it). A
 * mapping entry is located at its key, so `config.clients` points at `clients:` rather than at the
 * first client on the next line.
 */
export function createLocator(
  document: Document,
  lineCounter: LineCounter,
): (path: FieldPath) => number {
  const lineOf = (node: unknown): number | undefined =>
    isNode(node) && node.range ? lineCounter.linePos(node.range[0]).line : undefined

  return (path) => {
    let node: unknown = document.contents
    let line = lineOf(node) ?? 1
    for (const segment of path) {
      if (isAlias(node)) node = node.resolve(document)
      if (isMap(node)) {
        const pair = node.items.find((item) =>
          isScalar(item.key) ? String(item.key.value) === String(segment) : false,
        )
        if (!pair) break
        line = lineOf(pair.key) ?? lineOf(pair.value) ?? line
        node = pair.value
      } else if (isSeq(node) && typeof segment === 'number') {
        const item: unknown = node.items[segment]
        if (item === undefined) break
        line = lineOf(item) ?? line
        node = item
      } else {
        break
      }
    }
    return line
  }
}

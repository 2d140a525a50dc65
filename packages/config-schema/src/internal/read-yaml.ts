/**
 * The documents of one YAML file, with lines for the problems found in them.
 *
 * @module
 */
import { LineCounter, parseAllDocuments } from 'yaml'
import type { ConfigIssue } from '../model.js'
import type { FieldPath } from './issues.js'
import { createLocator } from './yaml-locator.js'

/** One non-empty document of a file. */
export interface YamlDocument {
  value: unknown
  /** The 1-based line of a field path (see `createLocator`). */
  locate: (path: FieldPath) => number
  /** The line the document's content starts on. */
  line: number
}

/**
 * Parses `text`, the contents of `file`: its non-empty documents, and an issue per YAML error.
 *
 * The YAML trees are not kept: a configuration of ten thousand files would hold them all for as
 * long as the issuer runs. `locate` parses the text again when first asked (for a problem, which
 * is rare), and keeps that tree for the file's later questions.
 */
export function readYamlText(
  file: string,
  text: string,
): { documents: YamlDocument[]; issues: ConfigIssue[] } {
  // prettyErrors off: the message stays one line. Lines are counted only where asked for.
  const parsed = parseAllDocuments(text, { prettyErrors: false })
  let reparsed: { documents: typeof parsed; lineCounter: LineCounter } | undefined
  // Made on the first question: ten thousand valid files need none.
  let locators: Map<number, (path: FieldPath) => number> | undefined
  const locateIn = (index: number) => (path: FieldPath) => {
    locators ??= new Map()
    let locate = locators.get(index)
    if (locate === undefined) {
      if (reparsed === undefined) {
        const again = new LineCounter()
        reparsed = {
          documents: parseAllDocuments(text, { lineCounter: again, prettyErrors: false }),
          lineCounter: again,
        }
      }
      const document = [...reparsed.documents][index]
      locate = document === undefined ? () => 1 : createLocator(document, reparsed.lineCounter)
      locators.set(index, locate)
    }
    return locate(path)
  }

  const documents: YamlDocument[] = []
  const issues: ConfigIssue[] = []
  let index = -1
  for (const document of parsed) {
    index++
    if (document.errors.length > 0) {
      for (const error of document.errors) {
        const line = lineAt(text, error.pos[0])
        issues.push({ file, line, path: '', message: `invalid YAML: ${error.message}` })
      }
      continue
    }
    const contents = document.contents
    const line = contents?.range ? lineAt(text, contents.range[0]) : 1
    let value: unknown
    try {
      value = document.toJS()
    } catch (error) {
      // For instance an alias expanding past the limit that guards against "billion laughs".
      const message = error instanceof Error ? error.message : String(error)
      issues.push({ file, line, path: '', message: `invalid YAML: ${message}` })
      continue
    }
    if (value === null || value === undefined) continue
    documents.push({ value, locate: locateIn(index), line })
  }
  return { documents, issues }
}

/** The 1-based line of `offset` in `text`, as the YAML LineCounter counts (only \n ends a line). */
function lineAt(text: string, offset: number): number {
  let line = 1
  for (let at = text.indexOf('\n'); at !== -1 && at < offset; at = text.indexOf('\n', at + 1)) {
    line++
  }
  return line
}

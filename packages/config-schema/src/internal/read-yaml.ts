/**
 * The documents of one YAML file, with lines for the problems found in them.
 *
 * @module
 */
import { LineCounter, parseAllDocuments } from 'yaml'
import type { Document } from 'yaml'
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
 * One document of a YAML text, as plain data that a worker thread can post (see
 * parallel-yaml.ts): its value, or its syntax errors, or why its value could not be made.
 * `offset` is where its content starts in the text, -1 when it has none.
 */
export type ParsedDocument =
  | { value: unknown; offset: number }
  | { errors: { offset: number; message: string }[] }
  | { failed: string; offset: number }

/**
 * Parses `text` into its documents. The YAML trees are dropped here: a configuration of ten
 * thousand files would hold them all for as long as the issuer runs.
 *
 * The worker threads of parallel-yaml.ts run a copy of this function (WORKER_SOURCE there); a
 * test holds the two to the same answers.
 */
export function parseYaml(text: string): ParsedDocument[] {
  const found: ParsedDocument[] = []
  // prettyErrors off: the message stays one line. Lines are counted only where asked for.
  for (const document of parseAllDocuments(text, { prettyErrors: false })) {
    if (document.errors.length > 0) {
      const errors = document.errors.map((error) => ({
        offset: error.pos[0],
        message: error.message,
      }))
      found.push({ errors })
      continue
    }
    const offset = document.contents?.range?.[0] ?? -1
    try {
      found.push({ value: document.toJS(), offset })
    } catch (error) {
      // For instance an alias expanding past the limit that guards against "billion laughs".
      found.push({ failed: error instanceof Error ? error.message : String(error), offset })
    }
  }
  return found
}

/**
 * Parses `text`, the contents of `file` (or takes `parsed`, what {@link parseYaml} answered for
 * it): its non-empty documents, and an issue per YAML error.
 *
 * `locate` parses the text again when first asked (for a problem, which is rare), and keeps that
 * tree for the file's later questions.
 */
export function readYamlText(
  file: string,
  text: string,
  parsed: readonly ParsedDocument[] = parseYaml(text),
): { documents: YamlDocument[]; issues: ConfigIssue[] } {
  const locateIn = lineLocators(text)

  const documents: YamlDocument[] = []
  const issues: ConfigIssue[] = []
  parsed.forEach((document, index) => {
    if ('errors' in document) {
      for (const error of document.errors) {
        const line = lineAt(text, error.offset)
        issues.push({ file, line, path: '', message: `invalid YAML: ${error.message}` })
      }
      return
    }
    const line = document.offset >= 0 ? lineAt(text, document.offset) : 1
    if ('failed' in document) {
      issues.push({ file, line, path: '', message: `invalid YAML: ${document.failed}` })
      return
    }
    const { value } = document
    if (value === null || value === undefined) return
    documents.push({ value, locate: locateIn(index), line })
  })
  return { documents, issues }
}

/**
 * The line locators of the documents of `text`, by document index. Made apart from
 * {@link readYamlText} so that a locator, which the files' index keeps for as long as the issuer
 * runs, holds the text alone: a closure made there would keep that function's whole scope alive,
 * with every parsed value of the file (a second copy of ten thousand tenants' configuration).
 */
function lineLocators(text: string): (index: number) => (path: FieldPath) => number {
  let reparsed: { documents: Document[]; lineCounter: LineCounter } | undefined
  // Made on the first question: ten thousand valid files need none.
  let locators: Map<number, (path: FieldPath) => number> | undefined
  return (index) => (path) => {
    locators ??= new Map()
    let locate = locators.get(index)
    if (locate === undefined) {
      if (reparsed === undefined) {
        const again = new LineCounter()
        reparsed = {
          documents: [
            ...parseAllDocuments(text, { lineCounter: again, prettyErrors: false }),
          ] as Document[],
          lineCounter: again,
        }
      }
      const document = reparsed.documents[index]
      locate = document === undefined ? () => 1 : createLocator(document, reparsed.lineCounter)
      locators.set(index, locate)
    }
    return locate(path)
  }
}

/** The 1-based line of `offset` in `text`, as the YAML LineCounter counts (only \n ends a line). */
function lineAt(text: string, offset: number): number {
  let line = 1
  for (let at = text.indexOf('\n'); at !== -1 && at < offset; at = text.indexOf('\n', at + 1)) {
    line++
  }
  return line
}

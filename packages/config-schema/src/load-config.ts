/**
 * `loadConfig`: reads tenant YAML from a file or a directory tree, then parses it.
 *
 * @module
 */
import { readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { LineCounter, parseAllDocuments } from 'yaml'
import { findYamlFiles } from './internal/find-files.js'
import { createLocator } from './internal/yaml-locator.js'
import { ConfigError } from './model.js'
import type { ConfigIssue, Tenant } from './model.js'
import { parseConfig } from './parse-config.js'
import type { ConfigDocument, ParseConfigOptions } from './parse-config.js'

/** Options of {@link loadConfig}: the same as `parseConfig`'s. */
export type LoadConfigOptions = ParseConfigOptions

/**
 * Loads every tenant from `path`: a YAML file, or a directory searched recursively for `*.yaml`
 * and `*.yml` files (in sorted order; names starting with a dot are skipped). A file may hold
 * several documents; empty ones are skipped.
 *
 * Throws a {@link ConfigError} carrying every issue, each with its real 1-based line: YAML syntax
 * errors, schema and rule problems (see `parseConfig`), a missing path, or no tenant at all.
 * File names in issues are `path` joined with the file's path inside it.
 *
 * @example
 * try {
 *   const options = { env: process.env, jwtSecret: process.env.JWT_SECRET }
 *   const tenants = await loadConfig('examples', options)
 * } catch (error) {
 *   if (!(error instanceof ConfigError)) throw error
 *   // examples/hs256/tenant.yaml:7: config.clients.0.client_id: must be a UUID
 *   console.error(error.message)
 *   process.exitCode = 1
 * }
 * @see docs/settings.md (TESSERA_CONFIG)
 */
export async function loadConfig(path: string, options: LoadConfigOptions): Promise<Tenant[]> {
  const found = await stat(path).catch((error: unknown) => error as NodeJS.ErrnoException)
  if (found instanceof Error) {
    const message = found.code === 'ENOENT' ? 'no such file or directory' : describeError(found)
    throw new ConfigError([{ file: path, line: 0, path: '', message }])
  }
  const directory = found.isDirectory()
  const files = directory ? (await findYamlFiles(path)).map((file) => join(path, file)) : [path]

  const issues: ConfigIssue[] = []
  const documents: ConfigDocument[] = []
  for (const file of files) {
    const read = await readYaml(file)
    issues.push(...read.issues)
    documents.push(...read.documents)
  }

  const parsed = parseConfig(documents, options)
  if (!parsed.ok) issues.push(...parsed.issues)
  if (issues.length > 0) {
    // Files in the order read, then by line; YAML and schema issues of one file interleave.
    const order = new Map(files.map((file, index) => [file, index]))
    const rank = (issue: ConfigIssue) => order.get(issue.file) ?? -1
    issues.sort((a, b) => rank(a) - rank(b) || a.line - b.line)
    throw new ConfigError(issues)
  }
  if (!parsed.ok || parsed.tenants.length === 0) {
    const searched = directory ? ' (searched for *.yaml and *.yml files)' : ''
    throw new ConfigError([
      { file: path, line: 0, path: '', message: `no tenant found${searched}` },
    ])
  }
  return parsed.tenants
}

/** The non-empty documents of one file, or the problems that kept them from being read. */
async function readYaml(
  file: string,
): Promise<{ documents: ConfigDocument[]; issues: ConfigIssue[] }> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    return {
      documents: [],
      issues: [{ file, line: 0, path: '', message: describeError(error as NodeJS.ErrnoException) }],
    }
  }

  const lineCounter = new LineCounter()
  const documents: ConfigDocument[] = []
  const issues: ConfigIssue[] = []
  // prettyErrors off: the message stays one line, and the line comes from the LineCounter.
  for (const document of parseAllDocuments(text, { lineCounter, prettyErrors: false })) {
    if (document.errors.length > 0) {
      for (const error of document.errors) {
        const { line } = lineCounter.linePos(error.pos[0])
        issues.push({ file, line, path: '', message: `invalid YAML: ${error.message}` })
      }
      continue
    }
    const locate = createLocator(document, lineCounter)
    let value: unknown
    try {
      value = document.toJS()
    } catch (error) {
      // For instance an alias expanding past the limit that guards against "billion laughs".
      const message = error instanceof Error ? error.message : String(error)
      issues.push({ file, line: locate([]), path: '', message: `invalid YAML: ${message}` })
      continue
    }
    if (value === null || value === undefined) continue
    documents.push({ file, value, locate })
  }
  return { documents, issues }
}

function describeError(error: NodeJS.ErrnoException): string {
  return error.code === 'EACCES' ? 'permission denied' : `cannot read: ${error.message}`
}

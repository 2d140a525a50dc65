/**
 * Tenant files one at a time: each read and checked alone, then admitted to a
 * {@link ConfigIndex} that applies the rules across files (unique names, hosts and client_ids).
 * `loadConfig` is built on these; a running issuer keeps the index, so that a changed file is
 * read and checked without reading the others.
 *
 * @module
 */
import { readFileSync } from 'node:fs'
import type { ConfigIssue, Tenant } from './model.js'
import { checkContext, checkDocument } from './parse-config.js'
import type { ConfigDocument, ParseConfigOptions } from './parse-config.js'
import { parseYaml, readYamlText } from './internal/read-yaml.js'
import type { ParsedDocument } from './internal/read-yaml.js'
import type { YamlParseCache } from './parse-cache.js'
import { createRuleIndex } from './internal/rules.js'
import type { Report, TenantFacts } from './internal/rules.js'

/** One tenant file, read and checked on its own. */
export interface ConfigFile {
  /** The file as shown in issues. */
  readonly file: string
  /** Its tenants in document order; empty when it has any problem of its own. */
  readonly tenants: readonly Tenant[]
  /**
   * Its own problems, by line: YAML, schema, provider scripts, `{env: VAR}` secrets. Clashes with
   * other files, and between documents of this file, are found when it is admitted to an index.
   */
  readonly issues: readonly ConfigIssue[]
}

// What the rules across documents need of a file, out of its public shape.
const factsOf = new WeakMap<ConfigFile, readonly TenantFacts[]>()

/**
 * Checks `text`, the contents of `file`, alone. Provider paths resolve against the file's folder.
 *
 * @example
 * const file = parseConfigFile('tenants/acme.yaml', text, { env: process.env, jwtSecret })
 * if (file.issues.length > 0) console.error(file.issues.map(formatConfigIssue).join('\n'))
 */
export function parseConfigFile(
  file: string,
  text: string,
  options: ParseConfigOptions,
): ConfigFile {
  const read = readYamlText(file, text, parsedFrom(text, options.parseCache))
  const issues = read.issues
  const context = checkContext(options)
  const tenants: Tenant[] = []
  const facts: TenantFacts[] = []
  for (const document of read.documents) {
    const { locate } = document
    const report: Report = (path, message) => {
      issues.push({ file, line: locate(path), path: path.join('.'), message })
    }
    const checked = checkDocument(
      { file, value: document.value, locate, line: () => document.line },
      context,
      report,
    )
    if (checked === undefined) continue
    facts.push(checked.facts)
    if (checked.tenant !== undefined) tenants.push(checked.tenant)
  }
  // YAML problems first on a line, then the document's: sort is stable.
  issues.sort((a, b) => a.line - b.line)
  // Copies of their length (a grown array keeps room for 17): a running issuer keeps both for
  // every file.
  const result: ConfigFile = { file, tenants: issues.length > 0 ? [] : tenants.slice(), issues }
  factsOf.set(result, facts.slice())
  return result
}

/** The documents of `text`: from `cache` when it knows them, else parsed. */
function parsedFrom(text: string, cache: YamlParseCache | undefined): readonly ParsedDocument[] {
  return cache?.get(text) ?? parseYaml(text)
}

/**
 * Reads `file` (synchronously: a tenant file is small, and ten thousand reads through the
 * thread pool take many times longer) and checks it alone, as {@link parseConfigFile}. A file
 * that cannot be read is a file with one issue.
 */
export function readConfigFile(file: string, options: ParseConfigOptions): ConfigFile {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    const issue = { file, line: 0, path: '', message: describeReadError(error) }
    const result: ConfigFile = { file, tenants: [], issues: [issue] }
    factsOf.set(result, [])
    return result
  }
  return parseConfigFile(file, text, options)
}

/**
 * Checks one document that is already parsed (a `kind: Tenant` resource from an API server, say)
 * alone, as {@link parseConfigFile} checks a file, and answers it as a file of one document, to
 * admit to a {@link ConfigIndex}: checking a changed resource against thousands of others then
 * costs time in proportion to that resource. `document.file` names it in issues; without
 * `document.locate`, every issue is on line 1.
 *
 * @example
 * const unit = parseConfigDocument({ file: 'kubernetes:tenants/acme', value: resource }, options)
 * const issues = [...unit.issues, ...index.admit(unit)]
 */
export function parseConfigDocument(
  document: ConfigDocument,
  options: ParseConfigOptions,
): ConfigFile {
  const { file } = document
  const locate = document.locate ?? (() => 1)
  const issues: ConfigIssue[] = []
  const report: Report = (path, message) => {
    issues.push({ file, line: locate(path), path: path.join('.'), message })
  }
  const checked = checkDocument(
    { file, value: document.value, locate, line: () => locate([]) },
    checkContext(options),
    report,
  )
  issues.sort((a, b) => a.line - b.line)
  const tenant = issues.length > 0 ? undefined : checked?.tenant
  const result: ConfigFile = { file, tenants: tenant === undefined ? [] : [tenant], issues }
  factsOf.set(result, checked === undefined ? [] : [checked.facts])
  return result
}

/**
 * The names, hosts and client_ids claimed by the files admitted so far. Admitting or releasing a
 * file costs time in proportion to that file's tenants, however many files the index holds.
 */
export interface ConfigIndex {
  /**
   * Checks every document of `file`, in order, against the files admitted before and the
   * documents of `file` before it, then records what it claims that was not claimed yet (the
   * first claim wins; a later one is the problem). Answers the problems, by line; admitting a
   * file with problems leaves its unclaimed names and hosts claimed, as a load that reports
   * every problem at once wants. Also reports an HS256 tenant without a usable JWT_SECRET.
   */
  admit(file: ConfigFile): ConfigIssue[]
  /** Forgets what `file` claims; what other files claim stays. */
  release(file: ConfigFile): void
}

/** An empty index; `jwtSecret` is the JWT_SECRET setting (HS256 tenants need it). */
export function createConfigIndex(jwtSecret: string | undefined): ConfigIndex {
  const rules = createRuleIndex(jwtSecret)
  return {
    admit(file) {
      const issues: ConfigIssue[] = []
      for (const facts of factsOf.get(file) ?? []) {
        rules.admit(facts, (path, message) => {
          issues.push({ file: facts.file, line: facts.locate(path), path: path.join('.'), message })
        })
      }
      return issues.sort((a, b) => a.line - b.line)
    },
    release(file) {
      for (const facts of factsOf.get(file) ?? []) rules.release(facts)
    },
  }
}

/** A file that could not be read, in a few words. */
export function describeReadError(error: unknown): string {
  const failure = error as NodeJS.ErrnoException
  return failure.code === 'EACCES' ? 'permission denied' : `cannot read: ${failure.message}`
}

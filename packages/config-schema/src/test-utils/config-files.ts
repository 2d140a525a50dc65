/**
 * Helpers for the tests: fixture paths, throw-away configuration trees, formatted issues.
 *
 * @module
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadConfig } from '../load-config.js'
import type { LoadConfigOptions } from '../load-config.js'
import { ConfigError, formatConfigIssue } from '../model.js'

/** A secret long enough for HS256 (at least 32 characters). */
export const JWT_SECRET = 'an-hs256-secret-of-32-characters'

/** Options with a valid JWT_SECRET and an empty environment. */
export const OPTIONS: LoadConfigOptions = { env: {}, jwtSecret: JWT_SECRET }

/** `test/fixtures/...`, relative to the working directory as users would type it. */
export function fixture(...parts: string[]): string {
  const root = fileURLToPath(new URL('../../test/fixtures/', import.meta.url))
  return relative(process.cwd(), join(root, ...parts))
}

/** Strips the indentation common to all lines, and the first line break, of a template. */
export function dedent(text: string): string {
  const lines = text.replace(/^\n/, '').split('\n')
  const indents = lines
    .filter((line) => line.trim() !== '')
    .map((line) => line.length - line.trimStart().length)
  const indent = Math.min(...indents)
  return lines.map((line) => line.slice(indent)).join('\n')
}

/** A temporary folder for generated configuration files; `remove` deletes it. */
export async function createTempFolder(): Promise<{
  root: string
  write: (files: Record<string, string>) => Promise<string>
  remove: () => Promise<void>
}> {
  const root = await mkdtemp(join(tmpdir(), 'tessera-config-'))
  let count = 0
  return {
    root,
    /** Writes `files` (dedented) into a new sub-folder and returns that folder. */
    async write(files) {
      const folder = join(root, `case-${++count}`)
      for (const [name, text] of Object.entries(files)) {
        const path = join(folder, name)
        await mkdir(dirname(path), { recursive: true })
        await writeFile(path, dedent(text))
      }
      await mkdir(folder, { recursive: true })
      return folder
    },
    remove: () => rm(root, { recursive: true, force: true }),
  }
}

/** Loads `path` expecting a ConfigError, and returns its issues formatted. */
export async function loadIssues(
  path: string,
  options: LoadConfigOptions = OPTIONS,
): Promise<string[]> {
  try {
    await loadConfig(path, options)
  } catch (error) {
    if (error instanceof ConfigError) return error.issues.map(formatConfigIssue)
    throw error
  }
  throw new Error(`expected ${path} to fail`)
}

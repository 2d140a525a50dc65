import { parseSettings, SETTINGS } from '@tessera/config-schema'
import type { SettingDefinition } from '@tessera/config-schema'
import { describe, expect, it } from 'vitest'
import { readRepoFile } from '../deploy/manifests.js'

/** A row of a settings table: the variable column, the default column, the meaning column. */
interface Row {
  variable: string
  default: string
  meaning: string
}

/** The rows of the "All settings" table of docs/settings.md, in order. */
function documented(): Row[] {
  const rows: Row[] = []
  for (const match of readRepoFile('docs/settings.md').matchAll(
    /^\| (`[A-Z_]+`[^|]*?) *\| ([^|]+?) *\| (.+?) *\|$/gm,
  )) {
    rows.push({ variable: match[1]!, default: match[2]!, meaning: match[3]! })
  }
  return rows
}

/** The default column of a setting: its own, or the default parseSettings applies, or none. */
function defaultColumn(key: string, definition: SettingDefinition): string {
  if (definition.doc.default !== undefined) return definition.doc.default
  const value = (
    parseSettings({}, 'start') as Record<string, string | number | boolean | undefined>
  )[key]
  return value === undefined ? '—' : `\`${String(value)}\``
}

/** The rows SETTINGS makes, in its order. */
function expected(): Row[] {
  return Object.entries(SETTINGS).map(([key, definition]: [string, SettingDefinition]) => ({
    variable:
      definition.doc.flag === undefined
        ? `\`${definition.env}\``
        : `\`${definition.env}\` (\`${definition.doc.flag}\`)`,
    default: defaultColumn(key, definition),
    meaning: definition.doc.meaning,
  }))
}

describe('docs/settings.md', () => {
  it('has one row per setting, in the order of SETTINGS, with its default and meaning', () => {
    expect(documented()).toEqual(expected())
  })

  it('gives the defaults parseSettings applies', () => {
    const rows = new Map(documented().map((row) => [row.variable, row.default]))
    const defaults = parseSettings({}, 'start')
    expect(rows.get('`TRUST_PROXY`')).toBe('`false`')
    expect(defaults.trustProxy).toBe(false)
    expect(rows.get('`ADMIN_PORT`')).toBe(`\`${defaults.adminPort}\``)
    expect(rows.get('`ADMIN_HOST`')).toBe(`\`${defaults.adminHost}\``)
    expect(rows.get('`MAX_BODY_BYTES`')).toBe(`\`${defaults.maxBodyBytes}\``)
    expect(rows.get('`DATABASE_MAX_CONNECTIONS`')).toBe(`\`${defaults.databaseMaxConnections}\``)
    expect(rows.get('`PORT`')).toBe(`\`${defaults.port}\``)
    expect(rows.get('`LOG_LEVEL`')).toBe(`\`${defaults.logLevel}\``)
    expect(rows.get('`SESSION_TTL_HOURS`')).toBe(`\`${defaults.sessionTtlHours}\``)
  })
})

describe('README.md settings table', () => {
  /** Each row's variables with their default, split on ` / ` as the README pairs them. */
  function readmeDefaults(): Map<string, string> {
    const readme = readRepoFile('README.md')
    const start = readme.indexOf('\n## Settings\n')
    const table = readme.slice(start, readme.indexOf('\n## ', start + 1))
    const defaults = new Map<string, string>()
    for (const match of table.matchAll(/^\| ([^|]+?) *\| ([^|]+?) *\|/gm)) {
      const names = [...match[1]!.matchAll(/`([A-Z][A-Z_]+)`/g)].map((name) => name[1]!)
      const values = match[2]!.split(' / ')
      names.forEach((name, index) => defaults.set(name, values[index] ?? ''))
    }
    return defaults
  }

  // KEY_PUBLISH_AHEAD_SECONDS has no row of its own: KEY_ROTATION_DAYS's row names it.
  it('gives the default of docs/settings.md in each row whose setting has one value', () => {
    const defaults = readmeDefaults()
    for (const [key, definition] of Object.entries(SETTINGS) as [string, SettingDefinition][]) {
      const column = defaultColumn(key, definition)
      if (defaults.has(definition.env) && /^`[^`]+`$/.test(column))
        expect(defaults.get(definition.env), definition.env).toBe(column)
    }
  })
})

import { parseSettings, SETTING_NAMES } from '@tessera/config-schema'
import { describe, expect, it } from 'vitest'
import { readRepoFile } from '../deploy/manifests.js'

/** The rows of the settings table: variable name → default column. */
function documented(): Map<string, string> {
  const rows = new Map<string, string>()
  for (const match of readRepoFile('docs/settings.md').matchAll(
    /^\| `([A-Z_]+)`[^|]*\| ([^|]+)\|/gm,
  )) {
    rows.set(match[1]!, match[2]!.trim())
  }
  return rows
}

describe('docs/settings.md', () => {
  it('lists every setting the issuer reads', () => {
    const rows = documented()
    for (const name of SETTING_NAMES) expect(rows.has(name), name).toBe(true)
  })

  it('gives the defaults parseSettings applies', () => {
    const rows = documented()
    const defaults = parseSettings({}, 'start')
    expect(rows.get('TRUST_PROXY')).toBe('`false`')
    expect(defaults.trustProxy).toBe(false)
    expect(rows.get('ADMIN_PORT')).toBe(`\`${defaults.adminPort}\``)
    expect(rows.get('ADMIN_HOST')).toBe(`\`${defaults.adminHost}\``)
    expect(rows.get('MAX_BODY_BYTES')).toBe(`\`${defaults.maxBodyBytes}\``)
    expect(rows.get('DATABASE_MAX_CONNECTIONS')).toBe(`\`${defaults.databaseMaxConnections}\``)
    expect(rows.get('PORT')).toBe(`\`${defaults.port}\``)
    expect(rows.get('LOG_LEVEL')).toBe(`\`${defaults.logLevel}\``)
    expect(rows.get('SESSION_TTL_HOURS')).toBe(`\`${defaults.sessionTtlHours}\``)
  })
})

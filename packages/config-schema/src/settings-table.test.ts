import { describe, expect, it } from 'vitest'
import { parseSettings } from './settings.js'
import { SETTING_NAMES, SETTINGS, SettingsSchema } from './settings-table.js'
import type { SettingsMode } from './setting-definition.js'

const ROWS = Object.entries(SETTINGS)
const MODES: SettingsMode[] = ['start', 'dev']

describe('SETTINGS', () => {
  it('names each variable once, in the order of SETTING_NAMES and of SettingsSchema', () => {
    const names = ROWS.map(([, { env }]) => env)
    expect(new Set(names).size).toBe(names.length)
    expect(SETTING_NAMES).toEqual(names)
    expect(Object.keys(SettingsSchema.shape)).toEqual(names)
  })

  it('gives each variable a flag-friendly name and a meaning', () => {
    for (const [key, { env, doc }] of ROWS) {
      expect(env, key).toMatch(/^[A-Z][A-Z_]*[A-Z]$/)
      expect(doc.meaning.trim(), env).not.toBe('')
    }
  })

  it('documents a default of its own exactly where the schema holds none for both modes', () => {
    for (const [key, { env, doc }] of ROWS) {
      const defaults = MODES.map((mode) => parseSettings({}, mode)[key as keyof typeof SETTINGS])
      const [start, dev] = defaults
      if (doc.default === undefined) {
        // The docs' default column is the schema's default, the same in both modes.
        expect(dev, env).toEqual(start)
        continue
      }
      if (key === 'jwksGraceHours') {
        expect(doc.default).toContain('`TOKEN_EXPIRATION_IN_HOURS`')
        continue
      }
      for (const value of defaults) expect(doc.default, env).toContain(`\`${String(value)}\``)
    }
  })
})

import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { startIssuer } from '../support/issuer.js'

const EXAMPLES = fileURLToPath(new URL('../../../../examples/', import.meta.url))

describe('tessera dev logs into a pipe', () => {
  it('writes JSON lines, the JWT_SECRET warning short with its fix in fields', async () => {
    // stdout is a pipe here: the coloured lines are for a terminal only.
    const dev = await startIssuer({
      command: 'dev',
      env: { TESSERA_CONFIG: join(EXAMPLES), DATABASE_URL: 'memory:', LOG_LEVEL: 'info' },
    })
    try {
      const lines = dev.logs.filter((line) => line !== '')
      expect(lines.join('\n')).not.toContain('\u001b[')
      const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
      const warning = entries.find((entry) => String(entry.msg).startsWith('JWT_SECRET'))
      expect(warning).toEqual(
        expect.objectContaining({
          level: 40,
          msg: 'JWT_SECRET is not set: using a random secret for this process only',
          fix: 'set JWT_SECRET (32+ characters)',
        }),
      )
      expect(String(warning?.msg).length).toBeLessThan(80)
    } finally {
      await dev.close()
    }
  })
})

import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { send } from '../support/http.js'
import { JWT_SECRET, startIssuer, tempDir } from '../support/issuer.js'

/** Writes `count` tenant files sharing one provider script; answers the directory. */
function writeTenants(dir: string, count: number): string {
  mkdirSync(join(dir, 'tenants'), { recursive: true })
  writeFileSync(join(dir, 'p.mjs'), 'export default { authenticate: async () => null }\n')
  for (let index = 0; index < count; index++) {
    const name = `t${String(index).padStart(3, '0')}`
    writeFileSync(
      join(dir, 'tenants', `${name}.yaml`),
      `name: ${name}\nconfig:\n  hosts: [${name}.test]\n  providers: [../p.mjs]\n  clients: []\n`,
    )
  }
  return dir
}

describe('the `tessera issuer listening` line', () => {
  let tmp: ReturnType<typeof tempDir>
  beforeAll(() => {
    tmp = tempDir()
  })
  afterAll(() => tmp.remove())

  const listening = (logs: string[]): Record<string, unknown> => {
    const line = logs.find((entry) => entry.includes('"msg":"tessera issuer listening"'))
    if (line === undefined) throw new Error('no listening line')
    return JSON.parse(line) as Record<string, unknown>
  }

  it('describes each of up to 100 tenants', async () => {
    const issuer = await startIssuer({
      command: 'dev',
      env: {
        JWT_SECRET,
        TESSERA_CONFIG: writeTenants(join(tmp.dir, 'hundred'), 100),
        DATABASE_URL: `sqlite:${tmp.dir}/hundred.db`,
      },
    })
    try {
      const line = listening(issuer.logs)
      expect(line.tenantCount).toBeUndefined()
      expect(line.tenants).toHaveLength(100)
    } finally {
      await issuer.close()
    }
  })

  it('past 100 tenants, gives their count and describes the first 100', async () => {
    const issuer = await startIssuer({
      command: 'dev',
      env: {
        JWT_SECRET,
        TESSERA_CONFIG: writeTenants(join(tmp.dir, 'many'), 101),
        DATABASE_URL: `sqlite:${tmp.dir}/many.db`,
      },
    })
    try {
      const line = listening(issuer.logs)
      expect(line.tenantCount).toBe(101)
      const tenants = line.tenants as { name: string; alg: string }[]
      expect(tenants).toHaveLength(100)
      expect(tenants[0]).toMatchObject({ name: 't000', alg: 'HS256' })
      // Every tenant is served, listed or not.
      const response = await send(issuer.url, {
        path: '/.well-known/openid-configuration',
        host: 't100.test',
      })
      expect(response.status).toBe(200)
    } finally {
      await issuer.close()
    }
  })
})

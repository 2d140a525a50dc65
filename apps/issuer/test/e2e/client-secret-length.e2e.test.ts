/**
 * Client secrets, literal or `{env: VAR}`, are at least 16 characters: check-config and start
 * refuse shorter ones, dev and check-config --dev warn.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeConfig } from '../support/client-assertion.js'
import { basicAuth, postForm } from '../support/http.js'
import { runCli } from '../support/cli.js'
import { JWT_SECRET, startIssuer, tempDir } from '../support/issuer.js'

const LITERAL = 'fifteen-chars-x'
const FROM_ENV = 'fifteen-chars-y'
const LITERAL_CLIENT = 'dddddddd-0000-4000-8000-000000000001'
const ENV_CLIENT = 'dddddddd-0000-4000-8000-000000000002'

describe('client secrets shorter than 16 characters', () => {
  let tmp: ReturnType<typeof tempDir>
  let config: string
  let vars: Record<string, string>

  beforeAll(() => {
    tmp = tempDir()
    config = writeConfig(
      tmp.dir,
      `name: short
config:
  hosts: [short.test]
  providers: [providers/users.mjs]
  clients:
    - client_id: ${LITERAL_CLIENT}
      client_secret: ${LITERAL}
      grant_types: [password]
    - client_id: ${ENV_CLIENT}
      client_secret: {env: SHORT_CLIENT_SECRET}
      grant_types: [password]
`,
    )
    vars = {
      JWT_SECRET,
      TESSERA_CONFIG: config,
      DATABASE_URL: `sqlite:${join(tmp.dir, 'tessera.db')}`,
      SHORT_CLIENT_SECRET: FROM_ENV,
    }
  })
  afterAll(() => tmp.remove())

  const file = (): string => join(config, 'tenants.yaml')

  it('are refused by check-config, one line each naming file, field path and rule', async () => {
    const result = await runCli(['check-config'], vars)
    expect(result.status).toBe(1)
    expect(result.stderr).toContain(
      `${file()}:7: config.clients.0.client_secret: must be at least 16 characters\n`,
    )
    expect(result.stderr).toContain(
      `${file()}:10: config.clients.1.client_secret: must be at least 16 characters (environment variable SHORT_CLIENT_SECRET)\n`,
    )
    expect(result.stderr).toContain('configuration refused: 2 problem(s) in')
    expect(result.stderr).not.toContain(FROM_ENV)
    expect(result.stderr).not.toContain(LITERAL)
  })

  it('are refused by start before it listens', async () => {
    const result = await runCli(['start', '--port', '0', '--admin-port', 'off'], {
      ...vars,
      KEY_ENCRYPTION_SECRET: 'client-secret-length-key-encryption-0123456789',
    })
    expect(result.status).toBe(1)
    expect(result.stderr).toContain(
      'config.clients.0.client_secret: must be at least 16 characters',
    )
    expect(result.stdout).not.toContain('listening')
  })

  it('are noted by check-config --dev, which accepts the configuration', async () => {
    const result = await runCli(['check-config', '--dev'], vars)
    expect(result.status).toBe(0)
    expect(result.stdout).toContain(
      `note: ${file()}:7: config.clients.0.client_secret: must be at least 16 characters (tessera start refuses it)`,
    )
    expect(result.stdout).toContain('(environment variable SHORT_CLIENT_SECRET)')
    expect(result.stdout).not.toContain(FROM_ENV)
  })

  it('are served by dev with a warning in the log', async () => {
    const issuer = await startIssuer({
      databaseUrl: vars.DATABASE_URL ?? '',
      config,
      vars: { SHORT_CLIENT_SECRET: FROM_ENV },
    })
    try {
      const warnings = issuer.logs
        .filter((line) => line.includes('client secret too short'))
        .map((line) => JSON.parse(line) as { level: number; problem: string })
      expect(warnings.map((w) => [w.level, w.problem])).toEqual([
        [40, `${file()}:7: config.clients.0.client_secret: must be at least 16 characters`],
        [
          40,
          `${file()}:10: config.clients.1.client_secret: must be at least 16 characters (environment variable SHORT_CLIENT_SECRET)`,
        ],
      ])
      const token = await postForm(
        issuer.url,
        'short.test',
        { grant_type: 'password', username: 'alice', password: 'alice-password' },
        { authorization: basicAuth(ENV_CLIENT, FROM_ENV) },
      )
      expect(token.status).toBe(200)
    } finally {
      await issuer.close()
    }
  })
})

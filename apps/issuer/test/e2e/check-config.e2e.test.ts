import { cpSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../support/cli.js'
import { JWT_SECRET, tempDir } from '../support/issuer.js'

const REPO = fileURLToPath(new URL('../../../../', import.meta.url))
const EXAMPLES = join(REPO, 'examples')
const ACME = join(EXAMPLES, 'acme', 'tenant.yaml')
const KEY_ENCRYPTION_SECRET = 'check-config-key-encryption-secret-0123456789'

const NO_JWT_SECRET = `${ACME}:7: config.jwt_algorithm: tenant "acme" uses HS256: JWT_SECRET is not set`
const NO_KEY_ENCRYPTION_SECRET =
  'environment: KEY_ENCRYPTION_SECRET: not set: tessera start refuses to serve RS256 tenant ' +
  '"globex" (its private keys would be stored in clear); make a secret with: openssl rand -base64 32'

/** The one format of a problem: `file[:line]: field path: what is wrong`. */
const PROBLEM_LINE = /^[^:\s]+(:\d+)?: [A-Za-z0-9_.]+: \S.*$/

function stderrLines(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line !== '')
}

describe('tessera check-config reports every problem at once, one format', () => {
  let tmp: ReturnType<typeof tempDir>
  beforeAll(() => {
    tmp = tempDir()
  })
  afterAll(() => tmp.remove())

  it('a missing JWT_SECRET does not hide the KEY_ENCRYPTION_SECRET refusal, nor the reverse', async () => {
    const result = await runCli(['check-config', '--config', EXAMPLES], {})
    expect(result.status).toBe(1)
    expect(result.stdout).toBe('')
    expect(stderrLines(result.stderr)).toEqual([
      NO_JWT_SECRET,
      NO_KEY_ENCRYPTION_SECRET,
      `configuration refused: 2 problem(s) in ${EXAMPLES}`,
    ])
  })

  it('settings problems and tenant problems come together, in the same format', async () => {
    const result = await runCli(['check-config', '--config', EXAMPLES], {
      PORT: 'http',
      SESSION_TTL_HOURS: '0',
    })
    expect(result.status).toBe(1)
    const lines = stderrLines(result.stderr)
    expect(lines).toEqual([
      'environment: SESSION_TTL_HOURS: must be a positive number',
      'environment: PORT: must be an integer between 0 and 65535',
      NO_JWT_SECRET,
      NO_KEY_ENCRYPTION_SECRET,
      `configuration refused: 4 problem(s) in ${EXAMPLES}`,
    ])
    for (const line of lines.slice(0, -1)) expect(line).toMatch(PROBLEM_LINE)
    expect(result.stderr).not.toContain('tessera: configuration problems')
  })

  it('a short JWT_SECRET is one problem, not also every HS256 tenant; the secret is not echoed', async () => {
    const short = 'short-jwt-secret'
    const result = await runCli(['check-config', '--config', EXAMPLES], {
      JWT_SECRET: short,
      KEY_ENCRYPTION_SECRET,
    })
    expect(result.status).toBe(1)
    expect(stderrLines(result.stderr)).toEqual([
      'environment: JWT_SECRET: must be at least 32 characters',
      `configuration refused: 1 problem(s) in ${EXAMPLES}`,
    ])
    expect(result.stderr).not.toContain(short)
  })

  it('a broken tenant file does not hide what the sound ones need', async () => {
    const dir = join(tmp.dir, 'broken-and-rs256')
    cpSync(EXAMPLES, dir, { recursive: true })
    writeFileSync(join(dir, 'acme', 'tenant.yaml'), 'name: acme\nconfig:\n  hosts: 42\n')
    const result = await runCli(['check-config', '--config', dir], { JWT_SECRET })
    expect(result.status).toBe(1)
    const lines = stderrLines(result.stderr)
    expect(result.stderr).toMatch(/acme\/tenant\.yaml:3: config\.hosts: /m)
    expect(lines).toContain(NO_KEY_ENCRYPTION_SECRET)
    expect(lines.at(-1)).toBe(`configuration refused: ${lines.length - 1} problem(s) in ${dir}`)
    for (const line of lines.slice(0, -1)) expect(line).toMatch(PROBLEM_LINE)
  })

  it('passes once both secrets are set', async () => {
    const result = await runCli(['check-config', '--config', EXAMPLES], {
      JWT_SECRET,
      KEY_ENCRYPTION_SECRET,
    })
    expect(result.stderr).toBe('')
    expect(result.status).toBe(0)
    expect(result.stdout).toContain(`configuration OK: 2 tenant(s) from ${EXAMPLES}`)
  })
})

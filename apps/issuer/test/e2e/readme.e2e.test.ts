import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readRepoFile, REPO } from '../deploy/manifests.js'
import { send } from '../support/http.js'
import { JWT_SECRET, startIssuer, tempDir } from '../support/issuer.js'
import type { IssuerProcess } from '../support/issuer.js'
import { readLoginPage } from '../support/oauth.js'

// The README's walk-through, run as written against the example tenants: its curl commands go
// to the issuer on a free port (curl's --connect-to keeps the Host the README names), and what
// they print is compared with the answers the README shows.

const execFileAsync = promisify(execFile)

/** The `sh` blocks of the README's `## Walk-through` section, in order. */
function walkThroughBlocks(): string[] {
  const readme = readRepoFile('README.md')
  const start = readme.indexOf('\n## Walk-through\n')
  expect(start).toBeGreaterThan(-1)
  const end = readme.indexOf('\n## ', start + 1)
  const section = readme.slice(start, end === -1 ? undefined : end)
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1]!)
}

function block(blocks: readonly string[], marker: string): string {
  const found = blocks.filter((code) => code.includes(marker))
  expect(found, `one walk-through block with ${marker}`).toHaveLength(1)
  return found[0]!
}

/** The JSON of a `# {...}` comment line that follows `after` in a block. */
function shownJson(code: string, after = 0): Record<string, unknown> {
  const line = code
    .slice(after)
    .split('\n')
    .find((text) => text.startsWith('# {'))
  if (line === undefined) throw new Error(`no "# {…}" answer shown in:\n${code}`)
  return JSON.parse(line.slice(2)) as Record<string, unknown>
}

/** `actual` has the keys shown, the values shown, and values that start as the shown "…" ones. */
function expectAsShown(actual: unknown, shown: Record<string, unknown>): void {
  expect(Object.keys(actual as object).sort()).toEqual(Object.keys(shown).sort())
  for (const [key, value] of Object.entries(shown)) {
    const got = (actual as Record<string, unknown>)[key]
    if (typeof value === 'string' && value.includes('…')) {
      expect(typeof got, key).toBe('string')
      expect((got as string).startsWith(value.slice(0, value.indexOf('…'))), key).toBe(true)
      expect((got as string).length, key).toBeGreaterThan(value.indexOf('…'))
    } else {
      expect(got, key).toEqual(value)
    }
  }
}

describe('README walk-through', () => {
  const blocks = walkThroughBlocks()
  const data = tempDir()
  let issuer: IssuerProcess
  let port: string

  beforeAll(async () => {
    issuer = await startIssuer({
      command: 'dev',
      env: {
        JWT_SECRET,
        TESSERA_CONFIG: `${REPO}examples`,
        DATABASE_URL: `sqlite:${data.dir}/t.db`,
      },
    })
    port = new URL(issuer.url).port
  })
  afterAll(async () => {
    await issuer?.close()
    data.remove()
  })

  /**
   * Runs README shell code with bash. Every curl goes to the test's issuer and ends its output
   * with a newline, so that the answers of consecutive commands can be told apart.
   */
  async function run(code: string): Promise<string> {
    const preamble = `set -eo pipefail\ncurl() { command curl --connect-to "::127.0.0.1:${port}" "$@"; echo; }\n`
    // The examples' hosts name no port: under dev their issuer URLs take the listening port,
    // which the README shows as 3000.
    const script = preamble + code.replaceAll('.localhost:3000', `.localhost:${port}`)
    const { stdout } = await execFileAsync('bash', ['-c', script], {
      cwd: REPO,
      env: { PATH: process.env.PATH ?? '' },
      timeout: 30_000,
    })
    return stdout
  }

  it('starts with pnpm start and a JWT_SECRET of 32+ characters', async () => {
    const start = block(blocks, 'pnpm start')
    const line = start.split('\n').find((text) => text.startsWith('export JWT_SECRET='))!
    const secret = (await run(`${line}\nprintf %s "$JWT_SECRET"`)).trim()
    expect(secret.length).toBeGreaterThanOrEqual(32)
  })

  it('gets a token with the password grant, as shown', async () => {
    const code = block(blocks, 'grant_type=password -d username=alice -d password=wonderland-42 -d')
    expectAsShown(JSON.parse(await run(code)), shownJson(code))
  })

  it('gets a service its own token with the client_credentials grant, as shown', async () => {
    const code = block(blocks, 'grant_type=client_credentials')
    expectAsShown(JSON.parse(await run(code)), shownJson(code))
  })

  it('decodes an RS256 token into the header and claims shown', async () => {
    const code = block(blocks, 'split(".")')
    const out = await run(code)
    const header = out.slice(0, out.indexOf('\n'))
    const payload = out.slice(header.length)
    for (const shown of ["alg: 'RS256'", "typ: 'JWT'"]) expect(header).toContain(shown)
    expect(header).toMatch(/kid: '\d{4}-\d{2}-\d{2}'/)
    for (const claim of ['name', 'email', 'iss', 'sub', 'aud', 'exp', 'iat', 'jti', 'client_id']) {
      expect(payload).toMatch(new RegExp(`\\b${claim}: `))
    }
    expect(payload).toContain(`iss: 'http://globex.localhost:${port}'`)
    expect(payload).toContain("scope: 'reports:read'")
  })

  it('fetches the keys and the metadata shown', async () => {
    const code = block(blocks, 'jwks.json')
    const [globex, acme, metadata] = (await run(code)).split('\n').filter(Boolean)
    const keys = JSON.parse(globex!) as { keys: Record<string, unknown>[] }
    const shown = shownJson(code) as { keys: Record<string, unknown>[] }
    expect(keys.keys.length).toBeGreaterThanOrEqual(1)
    expect(Object.keys(keys.keys[0]!).sort()).toEqual(Object.keys(shown.keys[0]!).sort())
    expect(keys.keys[0]).toMatchObject({ kty: 'RSA', e: 'AQAB', alg: 'RS256', use: 'sig' })
    expect(acme).toBe('{"keys":[]}')
    expect(code).toContain('# {"keys":[]}')
    expect(JSON.parse(metadata!)).toMatchObject({ issuer: `http://globex.localhost:${port}` })
  })

  it('shows the error a wrong password gets', async () => {
    const code = block(blocks, 'password=wrong')
    const out = await run(code)
    const shown = code.split('\n').filter((line) => line.startsWith('# '))
    expect(out.split('\r\n')[0]).toBe(shown[0]!.slice(2))
    expect(out).toMatch(/^cache-control: no-store\r$/im)
    expect(out.trimEnd().endsWith(shown[1]!.slice(2))).toBe(true)
  })

  it('signs in with PKCE, exchanges the code, refreshes and revokes as shown', async () => {
    const pkce = block(blocks, 'CHALLENGE')
    const printed = await run(`${pkce}\necho "$VERIFIER"`)
    const [url, verifier] = printed.trim().split('\n')
    const authorize = new URL(url!)
    expect(authorize.host).toBe(`acme.localhost:${port}`)

    // The browser's part: the login page, then the form posted with its cookie.
    const page = readLoginPage(
      await send(issuer.url, { path: authorize.pathname + authorize.search, host: authorize.host }),
    )
    const posted = await send(issuer.url, {
      method: 'POST',
      path: '/authorize',
      host: authorize.host,
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: page.cookie },
      body: new URLSearchParams({
        csrf_token: page.csrfToken,
        username: 'alice',
        password: 'wonderland-42',
      }).toString(),
    })
    expect(posted.status).toBe(303)
    const callback = new URL(posted.headers.location!)
    expect(`${callback.origin}${callback.pathname}`).toBe('http://localhost:8081/callback')
    expect(callback.searchParams.get('state')).toBe('demo')
    expect(callback.searchParams.get('iss')).toBe(`http://acme.localhost:${port}`)

    const exchange = block(blocks, 'grant_type=authorization_code')
    const rtLine = exchange.indexOf('\nRT=')
    expect(rtLine).toBeGreaterThan(-1)
    const withCode = exchange
      .slice(0, rtLine)
      .replace(/^CODE=….*$/m, `CODE=${callback.searchParams.get('code')!}`)
    const tokens = JSON.parse(await run(`VERIFIER=${verifier!}\n${withCode}`)) as {
      refresh_token: string
    }
    expectAsShown(tokens, shownJson(exchange))

    const withRefresh = exchange
      .slice(rtLine + 1)
      .replace(/^RT=….*$/m, `RT=${tokens.refresh_token}`)
    const [refreshed, revoked] = (await run(withRefresh)).split('\n')
    const next = JSON.parse(refreshed!) as Record<string, unknown>
    expectAsShown(next, shownJson(exchange))
    expect(next.refresh_token).not.toBe(tokens.refresh_token)
    expect(revoked ?? '').toBe('')
  })
})

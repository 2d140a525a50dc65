import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import type { AddressInfo, Server } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI, runCli } from '../support/cli.js'
import { FIXTURES, JWT_SECRET, tempDir } from '../support/issuer.js'

const REPO = fileURLToPath(new URL('../../../../', import.meta.url))
const EXAMPLES = join(REPO, 'examples')

/** A stack frame, as Node prints them: what a user must never see for a usage problem. */
const STACK_FRAME = /^\s+at .+:\d+:\d+\)?$/m

describe('tessera CLI usage', () => {
  let tmp: ReturnType<typeof tempDir>
  beforeAll(() => {
    tmp = tempDir()
  })
  afterAll(() => tmp.remove())

  const commands = [
    ['start'],
    ['dev'],
    ['check-config'],
    ['keys'],
    ['keys', 'list'],
    ['keys', 'rotate'],
    ['keys', 'revoke'],
    ['hash-password'],
  ]

  it.each(commands)('%s %s --help prints its help on stdout and exits 0', async (...command) => {
    for (const flag of ['--help', '-h']) {
      const result = await runCli([...command, flag], {}, { cwd: tmp.dir })
      expect(result.stderr).toBe('')
      expect(result.status).toBe(0)
      expect(result.stdout).toMatch(new RegExp(`^Usage: tessera ${command.join(' ')}\\b`))
    }
  })

  it('help COMMAND prints the same help as COMMAND --help', async () => {
    const [viaHelp, viaFlag] = await Promise.all([
      runCli(['help', 'keys', 'revoke'], {}),
      runCli(['keys', 'revoke', '--help'], {}),
    ])
    expect(viaHelp.status).toBe(0)
    expect(viaHelp.stdout).toBe(viaFlag.stdout)
  })

  it('--help wins over other flags and arguments, even wrong ones', async () => {
    const result = await runCli(['check-config', '--bogus', 'x', '--help'], {})
    expect(result.status).toBe(0)
    expect(result.stdout).toMatch(/^Usage: tessera check-config/)
  })

  it('no arguments prints the help on stderr and exits 1; --help exits 0', async () => {
    const [bare, asked, keys] = await Promise.all([
      runCli([], {}),
      runCli(['--help'], {}),
      runCli(['keys'], {}),
    ])
    expect(bare.status).toBe(1)
    expect(bare.stdout).toBe('')
    expect(bare.stderr).toMatch(/^Usage: tessera <command>/)
    expect(asked.status).toBe(0)
    expect(asked.stdout).toBe(bare.stderr)
    expect(keys.status).toBe(1)
    expect(keys.stderr).toMatch(/^Usage: tessera keys <list\|rotate\|revoke>/)
  })

  it('says what is wrong with a command line in one line, exit 1, no parser essay', async () => {
    const cases: [string[], string][] = [
      [['check-config', '--bogus'], 'tessera check-config: unknown flag --bogus'],
      [['dev', '--port'], 'tessera dev: --port needs a value'],
      [['check-config', '--dev=yes'], 'tessera check-config: --dev takes no value'],
      [['start', 'extra'], 'tessera start: unexpected argument "extra"'],
      [['keys', 'list', '--kid', 'k'], 'tessera keys list: --kid is not a flag of keys list'],
      [['keys', 'nope'], 'tessera keys: unknown subcommand "nope"'],
      [['hash-password', 'secret-on-argv'], 'tessera hash-password: takes no arguments'],
      [['nope'], 'tessera: unknown command "nope"'],
      [['help', 'nope'], 'tessera: no command "nope"'],
    ]
    const results = await Promise.all(cases.map(([args]) => runCli(args, {}, { cwd: tmp.dir })))
    results.forEach((result, i) => {
      const [args, expected] = cases[i]!
      expect(result.status, args.join(' ')).toBe(1)
      expect(result.stderr.split('\n').filter(Boolean), args.join(' ')).toHaveLength(1)
      expect(result.stderr, args.join(' ')).toContain(expected)
      expect(result.stderr, args.join(' ')).toContain('--help')
      expect(result.stderr).not.toContain('To specify a positional argument')
      expect(result.stderr).not.toContain('secret-on-argv')
    })
  })

  it('without --config and without ./config, says so and suggests --dev or --config DIR', async () => {
    const vars = { DATABASE_URL: `sqlite:${tmp.dir}/missing.db`, JWT_SECRET }
    const results = await Promise.all([
      runCli(['check-config'], vars, { cwd: tmp.dir }),
      runCli(['keys', 'list'], vars, { cwd: tmp.dir }),
      runCli(['keys', 'rotate', '--tenant', 'acme'], vars, { cwd: tmp.dir }),
      runCli(['keys', 'revoke', '--tenant', 'acme', '--kid', 'k'], vars, { cwd: tmp.dir }),
    ])
    const names = ['check-config', 'keys list', 'keys rotate', 'keys revoke']
    results.forEach((result, i) => {
      expect(result.status).toBe(1)
      expect(result.stderr).toBe(
        `tessera ${names[i]}: ./config does not exist (the default TESSERA_CONFIG of start); ` +
          'add --dev for the examples, or give --config DIR\n',
      )
    })
    const start = await runCli(['start', '--port', '0'], vars, { cwd: tmp.dir })
    expect(start.status).toBe(1)
    expect(start.stderr).toContain('tessera start: ./config does not exist')
    expect(start.stderr).toContain('run tessera dev for the examples, or give --config DIR')
    // A directory that was named is the loader's to report, naming it.
    const named = await runCli(['check-config', '--config', join(tmp.dir, 'nowhere')], vars)
    expect(named.status).toBe(1)
    expect(named.stderr).toContain(`${join(tmp.dir, 'nowhere')}: no such file or directory`)
  })

  it('keys list --dev and check-config --dev work in a clone with nothing set', async () => {
    const vars = { DATABASE_URL: `sqlite:${tmp.dir}/dev-keys.db` }
    const [keys, checked] = await Promise.all([
      runCli(['keys', 'list', '--dev'], vars, { cwd: REPO }),
      runCli(['check-config', '--dev'], {}, { cwd: REPO }),
    ])
    expect(keys.stderr).toBe('')
    expect(keys.status).toBe(0)
    expect(keys.stdout).toContain('globex (signs with RS256)')
    // dev makes up a JWT_SECRET and only warns without KEY_ENCRYPTION_SECRET: so does --dev.
    expect(checked.stderr).toBe('')
    expect(checked.status).toBe(0)
    expect(checked.stdout).toContain('configuration OK: 2 tenant(s) from ./examples')
    expect(checked.stdout).toContain('note: JWT_SECRET is not set')
    expect(checked.stdout).toContain('note: KEY_ENCRYPTION_SECRET is not set')
    // start's rules stay: without --dev, the HS256 tenant needs JWT_SECRET.
    const strict = await runCli(['check-config', '--config', EXAMPLES], {})
    expect(strict.status).toBe(1)
    expect(strict.stderr).toContain('JWT_SECRET is not set')
  })

  it('check-config refuses a short KEY_ENCRYPTION_SECRET as start does', async () => {
    const short = 'k'.repeat(31)
    const result = await runCli(
      ['check-config', '--dev'],
      { KEY_ENCRYPTION_SECRET: short },
      {
        cwd: REPO,
      },
    )
    expect(result.status).toBe(1)
    expect(result.stderr).toContain('KEY_ENCRYPTION_SECRET: must be at least 32 characters')
    expect(result.stderr).not.toContain(short)
  })

  it('--session-ttl-hours is the flag of SESSION_TTL_HOURS: refused in one line, and wins over the variable', async () => {
    const [flag, variable, overridden] = await Promise.all([
      runCli(['check-config', '--dev', '--session-ttl-hours', '0'], {}, { cwd: REPO }),
      runCli(['check-config', '--dev'], { SESSION_TTL_HOURS: '-1' }, { cwd: REPO }),
      runCli(
        ['check-config', '--dev', '--session-ttl-hours', '0.5'],
        { SESSION_TTL_HOURS: 'eight' },
        { cwd: REPO },
      ),
    ])
    for (const refused of [flag, variable]) {
      expect(refused.status).toBe(1)
      expect(refused.stderr).toContain('environment: SESSION_TTL_HOURS: must be a positive number')
      expect(refused.stderr).not.toMatch(STACK_FRAME)
    }
    expect(overridden.stderr).toBe('')
    expect(overridden.status).toBe(0)
  })

  describe('a port in use', () => {
    let taken: Server
    let port: number
    beforeAll(async () => {
      taken = createServer()
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
      port = (taken.address() as AddressInfo).port
    })
    afterAll(() => new Promise<void>((resolve) => taken.close(() => resolve())))

    const vars = (): Record<string, string> => ({
      JWT_SECRET,
      TESSERA_CONFIG: join(FIXTURES, 'basic'),
      DATABASE_URL: `sqlite:${tmp.dir}/busy.db`,
      HOST: '127.0.0.1',
    })

    it('PORT: one line naming the port and the setting, exit 1, no stack trace', async () => {
      const result = await runCli(['dev', '--port', String(port)], { ...vars(), ADMIN_PORT: '0' })
      expect(result.status).toBe(1)
      expect(result.stderr).toBe(`tessera: port ${port} is in use; set PORT\n`)
      expect(result.stdout).not.toContain('listening')
      expect(result.stdout + result.stderr).not.toMatch(STACK_FRAME)
    })

    it('ADMIN_PORT: names ADMIN_PORT, for start as for dev', async () => {
      const result = await runCli(['start', '--port', '0', '--admin-port', String(port)], {
        ...vars(),
        KEY_ENCRYPTION_SECRET: 'cli-usage-key-encryption-secret-0123456789',
      })
      expect(result.status).toBe(1)
      expect(result.stderr).toBe(`tessera: port ${port} is in use; set ADMIN_PORT\n`)
      expect(result.stdout + result.stderr).not.toMatch(STACK_FRAME)
    })
  })

  it('hash-password documents that one trailing newline is stripped, and does so', async () => {
    const help = await runCli(['hash-password', '--help'], {})
    expect(help.stdout).toContain('less ONE trailing newline')
    expect(readFileSync(join(REPO, 'docs', 'cli.md'), 'utf8')).toMatch(
      /one trailing newline[\s\S]{0,40}is stripped/,
    )
    const hash = (input: string): string =>
      spawnSync(process.execPath, [CLI, 'hash-password'], { input, encoding: 'utf8' }).stdout.trim()
    const { verifyPassword } = await import('../../src/index.js')
    expect(await verifyPassword('pw with space ', hash('pw with space \r\n'))).toBe(true)
    expect(await verifyPassword('two\n', hash('two\n\n'))).toBe(true)
  })
})

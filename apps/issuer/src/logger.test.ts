import { spawnSync } from 'node:child_process'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { createLogger, createRequestLogger } from './logger.js'

function capture(): { lines: () => Record<string, unknown>[]; sink: Writable } {
  const chunks: string[] = []
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'))
      done()
    },
  })
  const lines = (): Record<string, unknown>[] =>
    chunks
      .join('')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
  return { lines, sink }
}

describe('createRequestLogger', () => {
  it('writes the request line exactly as the redacting logger does', () => {
    const { lines, sink } = capture()
    const logger = createLogger('info', sink)
    const line = { method: 'POST', path: '/token', status: 200, ms: 1.25, tenant: 'acme' }
    logger.info(line, 'request')
    createRequestLogger(logger).info(line, 'request')
    const [redacted, fast] = lines().map(({ time: _time, ...rest }) => rest)
    expect(fast).toEqual(redacted)
    expect(fast).toMatchObject({ ...line, level: 30, msg: 'request' })
  })

  it('leaves every other line redacted', () => {
    const { lines, sink } = capture()
    const logger = createLogger('info', sink)
    createRequestLogger(logger)
    logger.info({ password: 'p', body: { client_secret: 's', refresh_token: 'r' } }, 'x')
    expect(lines()[0]).toMatchObject({
      password: '[redacted]',
      body: { client_secret: '[redacted]', refresh_token: '[redacted]' },
    })
  })
})

describe('createLogger on stdout', () => {
  // The built module, as the CLI runs it (the e2e tests run dist/ the same way).
  const built = fileURLToPath(new URL('../dist/logger.js', import.meta.url))
  const run = (script: string): { stdout: string; status: number | null } => {
    const result = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { createLogger } = await import(${JSON.stringify(built)})\n${script}`,
      ],
      { encoding: 'utf8' },
    )
    return { stdout: result.stdout, status: result.status }
  }
  const messages = (stdout: string): unknown[] =>
    stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => (JSON.parse(line) as { msg: unknown }).msg)

  it('writes every line, in order, by the end of the turn that logged it', () => {
    const { stdout } = run(`
      const logger = createLogger('info')
      logger.info('a')
      logger.info('b')
      setImmediate(() => setImmediate(() => { logger.info('c') }))
    `)
    expect(messages(stdout)).toEqual(['a', 'b', 'c'])
  })

  it('writes what is pending when the process exits or crashes', () => {
    const exited = run(`
      const logger = createLogger('info')
      logger.info('before exit')
      process.exit(3)
    `)
    expect(exited.status).toBe(3)
    expect(messages(exited.stdout)).toEqual(['before exit'])
    const crashed = run(`
      const logger = createLogger('info')
      setTimeout(() => {
        logger.error('before the crash')
        throw new Error('boom')
      }, 1)
    `)
    expect(crashed.status).toBe(1)
    expect(messages(crashed.stdout)).toEqual(['before the crash'])
  })
})

import { spawnSync } from 'node:child_process'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { atomicChunks, createLogger, createRequestLogger } from './logger.js'

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
  const built = fileURLToPath(new URL('../../dist/observability/logger.js', import.meta.url))
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

  it('keeps whole lines when several processes write to one pipe (the workers of --workers)', () => {
    const script = `
      const { createLogger } = await import(${JSON.stringify(built)})
      const logger = createLogger('info')
      for (let i = 0; i < 3000; i++) logger.info({ i, pad: 'x'.repeat(300) }, 'line')
    `
    const one = '"$NODE" --input-type=module -e "$SCRIPT"'
    // Three writers on the same pipe, each flushing about 1 MB in one turn.
    const result = spawnSync('sh', ['-c', `${one} & ${one} & ${one} & wait`], {
      encoding: 'utf8',
      env: { ...process.env, NODE: process.execPath, SCRIPT: script },
      maxBuffer: 64 * 1024 * 1024,
    })
    const lines = result.stdout.split('\n').filter((line) => line !== '')
    const broken = lines.filter((line) => {
      try {
        return (JSON.parse(line) as { msg?: unknown }).msg !== 'line'
      } catch {
        return true
      }
    })
    expect(broken.map((line) => line.slice(0, 80))).toEqual([])
    expect(lines).toHaveLength(9000)
  })
})

describe('atomicChunks', () => {
  it('cuts at line ends into pipe-atomic writes, a longer line alone', () => {
    const line = (n: number): string => `${'a'.repeat(n - 1)}\n`
    expect(atomicChunks(line(10) + line(10))).toEqual([line(10) + line(10)])
    const chunks = atomicChunks(line(3000) + line(1000) + line(500) + line(5000) + line(10))
    expect(chunks).toEqual([line(3000) + line(1000), line(500), line(5000), line(10)])
    expect(chunks.join('')).toBe(line(3000) + line(1000) + line(500) + line(5000) + line(10))
  })
})

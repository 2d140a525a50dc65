import { Writable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { createConsoleLogger, logFormatFor } from './console-logger.js'

function sink(): { text: () => string; stream: Writable } {
  const chunks: string[] = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'))
      done()
    },
  })
  return { text: () => chunks.join(''), stream }
}

// The escape that starts an ANSI colour.
const ESC = '\u001b['

describe('logFormatFor', () => {
  it('is pretty for dev on a terminal, JSON for dev into a pipe and for start always', () => {
    expect(logFormatFor('dev', true)).toBe('pretty')
    expect(logFormatFor('dev', false)).toBe('json')
    expect(logFormatFor('start', true)).toBe('json')
    expect(logFormatFor('start', false)).toBe('json')
  })
})

describe('createConsoleLogger', () => {
  it('writes one coloured line per entry for dev on a terminal, still redacted', async () => {
    const out = sink()
    const logger = await createConsoleLogger('info', 'dev', {
      stdoutIsTty: true,
      destination: out.stream,
    })
    logger.warn({ fix: 'set JWT_SECRET', password: 'hunter2-secret' }, 'JWT_SECRET is not set')
    const text = out.text()
    expect(text.split('\n').filter(Boolean)).toHaveLength(1)
    expect(text).toContain(ESC)
    expect(text).toContain('WARN')
    expect(text).toContain('JWT_SECRET is not set')
    expect(text).toContain('set JWT_SECRET')
    expect(text).not.toContain('hunter2-secret')
    expect(() => JSON.parse(text) as unknown).toThrow()
  })

  it.each([
    ['dev', false],
    ['start', true],
    ['start', false],
  ] as const)('writes JSON lines for %s with stdout a terminal: %s', async (mode, tty) => {
    const out = sink()
    const logger = await createConsoleLogger('info', mode, {
      stdoutIsTty: tty,
      destination: out.stream,
    })
    logger.warn({ password: 'hunter2-secret' }, 'JWT_SECRET is not set')
    const text = out.text()
    expect(text).not.toContain(ESC)
    expect(JSON.parse(text)).toMatchObject({
      level: 40,
      msg: 'JWT_SECRET is not set',
      password: '[redacted]',
    })
  })
})

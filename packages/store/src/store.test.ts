import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { existsSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { StoreError } from './errors.js'
import { openStore } from './store.js'

let dir: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-open-store-'))
})

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

async function failure(url: string): Promise<StoreError> {
  const error: unknown = await openStore(url).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(StoreError)
  return error as StoreError
}

describe('openStore', () => {
  it('opens a memory store for memory:', async () => {
    const store = await openStore('memory:')
    await store.keys.listKeys('acme')
    await store.close()
  })

  it('opens an SQLite file for sqlite:PATH, relative to the working directory', async () => {
    const file = join(dir, 'data', 'tessera.db')
    const store = await openStore(`sqlite:${relative(process.cwd(), file)}`)
    await store.ping()
    await store.close()
    expect(existsSync(file)).toBe(true)
  })

  it('opens a private in-memory SQLite database for sqlite::memory:', async () => {
    const store = await openStore('sqlite::memory:')
    expect(await store.keys.listKeys('acme')).toEqual([])
    await store.close()
  })

  // Opening a real PostgreSQL database is tested in postgres.test.ts.
  it.each([
    'postgres://tessera:hunter2@127.0.0.1:1/tessera',
    'postgresql://tessera:hunter2@127.0.0.1:1/tessera',
  ])('hands %s to the PostgreSQL adapter, whose error names no credential', async (url) => {
    const error = await failure(url)
    expect(error.code).toBe('ERR_STORE_OPEN')
    expect(error.message).toMatch(/PostgreSQL database "tessera" on 127\.0\.0\.1:1/)
    expect(error.message).not.toMatch(/hunter2|tessera@/)
  })

  it('names only the scheme of an unsupported URL', async () => {
    const error = await failure('mysql://root:hunter2@db.internal/tessera')
    expect(error.code).toBe('ERR_STORE_URL')
    expect(error.message).toContain('"mysql:"')
    expect(error.message).not.toMatch(/hunter2|root|db\.internal/)
  })

  it('names no part of a URL that lacks a scheme', async () => {
    const error = await failure('admin:hunter2@db.internal/tessera')
    expect(error.code).toBe('ERR_STORE_URL')
    expect(error.message).not.toMatch(/admin|hunter2|db\.internal/)
    expect((await failure('./data/tessera.db')).code).toBe('ERR_STORE_URL')
  })

  it('ignores maxConnections for memory: and SQLite, which have no pool', async () => {
    for (const url of ['memory:', 'sqlite::memory:']) {
      const store = await openStore(url, { maxConnections: 0 })
      await store.ping()
      await store.close()
    }
  })

  it('refuses memory: with a path and sqlite: without one', async () => {
    expect((await failure('memory:something')).code).toBe('ERR_STORE_URL')
    expect((await failure('sqlite:')).code).toBe('ERR_STORE_URL')
  })
})

import type { Pool, PoolClient, QueryResult, QueryResultRow } from 'pg'
import { StoreError } from '../errors.js'
import { translateError, type PgTarget } from './database.js'

/** Runs one statement; on a pool, on a transaction's client, with the same parameter checks. */
export type Sql = <R extends QueryResultRow = QueryResultRow>(
  text: string,
  values?: readonly unknown[],
) => Promise<QueryResult<R>>

/** How each port of the PostgreSQL store runs an operation: alone on the pool, or in one transaction. */
export interface PgRunner {
  /** Runs one operation: refused once closed, with driver errors translated. */
  readonly run: <T>(method: string, body: (sql: Sql) => Promise<T>) => Promise<T>
  /**
   * Runs `body` in one transaction on one connection (READ COMMITTED), inside `run`: committed
   * if it returns, rolled back if it throws. A connection whose rollback fails is discarded.
   */
  readonly transaction: <T>(method: string, body: (sql: Sql) => Promise<T>) => Promise<T>
}

/** A {@link PgRunner} over a pool, and the pool's end. */
export interface PgPool extends PgRunner {
  /** Ends the pool, once; every later operation fails with ERR_STORE_CLOSED. */
  readonly end: () => Promise<void>
}

/** The most statements one store prepares (see statementName); it runs about 30. */
const PREPARED_LIMIT = 100

/** UTF-8 for a BYTEA column (see PG_MIGRATIONS). */
export function utf8(text: string): Buffer {
  return Buffer.from(text, 'utf8')
}

/** `$1, $2, $3` from `$first`: one numbered parameter per column. */
export function placeholders(columns: readonly string[], first = 1): string {
  return columns.map((_, i) => `$${first + i}`).join(', ')
}

function closedError(cause?: unknown): StoreError {
  return new StoreError(
    'ERR_STORE_CLOSED',
    'the PostgreSQL store is closed',
    cause === undefined ? undefined : { cause },
  )
}

export function createPgPool(pool: Pool, target: PgTarget): PgPool {
  let ended: Promise<void> | undefined
  const statementNames = new Map<string, string>()

  function sqlOn(method: string, runner: Pool | PoolClient): Sql {
    return (text, values = []) => {
      for (const value of values) {
        // PostgreSQL TEXT cannot hold U+0000; the columns that must (state, throttle keys) are
        // BYTEA and get Buffers. Refused here, like a lone surrogate, rather than by the server.
        if (typeof value === 'string' && value.includes('\u0000')) {
          throw new TypeError(`${method}: PostgreSQL cannot store a string containing U+0000`)
        }
      }
      return runner.query({ name: statementName(text), text, values: values as unknown[] })
    }
  }

  /**
   * The name each statement is prepared under, so that a connection parses and plans it once,
   * not on every call: parsing and planning cost as much as a round trip for a join, and twice
   * that for a rotation's CTEs. Every text is a constant of this adapter, so the names stay few;
   * past PREPARED_LIMIT (a text built from data, which there should never be) statements run
   * unnamed. Names are per connection, and node-postgres prepares each on first use.
   */
  function statementName(text: string): string | undefined {
    let name = statementNames.get(text)
    if (name === undefined && statementNames.size < PREPARED_LIMIT) {
      name = `tessera_${statementNames.size + 1}`
      statementNames.set(text, name)
    }
    return name
  }

  async function run<T>(method: string, body: (sql: Sql) => Promise<T>): Promise<T> {
    if (ended !== undefined) throw closedError()
    try {
      return await body(sqlOn(method, pool))
    } catch (error) {
      const translated = translateError(target, error)
      // An operation caught by close() fails for that reason, whatever the pool says.
      const lost =
        translated instanceof StoreError
          ? translated.code === 'ERR_STORE_UNAVAILABLE'
          : !(translated instanceof TypeError)
      throw ended !== undefined && lost ? closedError(error) : translated
    }
  }

  async function transaction<T>(method: string, body: (sql: Sql) => Promise<T>): Promise<T> {
    const client = await pool.connect()
    // Between two statements the client is checked out and has no listener of the pool's; a
    // connection error then must not become an uncaught exception (the next query fails).
    const ignore = (): void => undefined
    client.on('error', ignore)
    let broken: Error | undefined
    try {
      await client.query('BEGIN')
      const result = await body(sqlOn(method, client))
      await client.query('COMMIT')
      return result
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error('rollback failed')
      })
      throw error
    } finally {
      client.off('error', ignore)
      client.release(broken)
    }
  }

  return {
    run,
    transaction,
    end() {
      ended ??= pool.end()
      return ended
    },
  }
}

import { randomBytes } from 'node:crypto'
import pg from 'pg'

/**
 * The environment variable naming the PostgreSQL server the tests use: a URL whose role may
 * create and drop databases.
 */
export const TEST_POSTGRES_URL_ENV = 'TESSERA_TEST_POSTGRES_URL'

/** The local server CI starts (PostgreSQL 15, trust authentication on 127.0.0.1). */
const DEFAULT_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/postgres'

/** The admin URL: `TESSERA_TEST_POSTGRES_URL`, or `postgres://postgres@127.0.0.1:5432/postgres`. */
export function testPostgresAdminUrl(): string {
  const url = process.env[TEST_POSTGRES_URL_ENV]
  return url === undefined || url === '' ? DEFAULT_ADMIN_URL : url
}

/** How to create a test database. */
export interface TestDatabaseOptions {
  /**
   * A database to copy (`CREATE DATABASE … TEMPLATE`), for instance one already migrated: a copy
   * is cheaper than migrating again. Nobody may be connected to it while it is copied.
   */
  template?: string
}

/** A database of its own for one test or test file; drop it when done. */
export interface TestDatabase {
  /** Its name, `tessera_test_` and 16 hex digits. */
  readonly name: string
  /** The admin URL with this database in its path: credentials and query parameters kept. */
  readonly url: string
  /**
   * Drops the database, closing whatever connections are still open on it (`WITH (FORCE)`).
   * Idempotent.
   */
  drop(): Promise<void>
}

/** Where the admin URL points, without its credentials, for error messages. */
function describeServer(adminUrl: string): string {
  try {
    const { hostname, port } = new URL(adminUrl)
    return `${hostname || 'localhost'}:${port || '5432'}`
  } catch {
    return 'an unparsable URL'
  }
}

/** Runs statements on one short-lived connection to the admin database. */
async function onAdmin(adminUrl: string, statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 })
  try {
    await client.connect()
  } catch (cause) {
    throw new Error(
      `test PostgreSQL server at ${describeServer(adminUrl)} is not reachable; start one or set ` +
        `${TEST_POSTGRES_URL_ENV} to a URL whose role may create databases`,
      { cause },
    )
  }
  try {
    for (const statement of statements) await client.query(statement)
  } finally {
    await client.end()
  }
}

/**
 * Creates an empty database with a unique name on the test server ({@link testPostgresAdminUrl})
 * and returns its URL. Each test, or each test file, takes its own, so suites can run in parallel
 * and never see each other's rows; `drop()` it in an `afterAll` or `afterEach`.
 *
 * @example
 * ```ts
 * let db: TestDatabase
 * beforeAll(async () => {
 *   db = await createTestDatabase()
 * })
 * afterAll(() => db.drop())
 * it('opens', async () => {
 *   const store = await openStore(db.url)
 * })
 * ```
 */
export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const adminUrl = testPostgresAdminUrl()
  const name = `tessera_test_${randomBytes(8).toString('hex')}`
  const template =
    options.template === undefined ? '' : ` TEMPLATE ${pg.escapeIdentifier(options.template)}`
  await onAdmin(adminUrl, [`CREATE DATABASE ${pg.escapeIdentifier(name)}${template}`])
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  let dropped: Promise<void> | undefined
  return {
    name,
    url: url.toString(),
    drop() {
      dropped ??= onAdmin(adminUrl, [
        `DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`,
      ])
      return dropped
    },
  }
}

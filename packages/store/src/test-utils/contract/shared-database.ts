import type { Store } from '../../store.js'

/**
 * One database that several replicas share, as an adapter's test file provides it to the replica
 * contract. Stores it opens are closed by that file after each test.
 */
export interface SharedDatabase {
  /** Empties the database, or makes a new one, and answers its openStore URL. */
  fresh(): Promise<string>
  /** Opens one more store on the database at `url`, as another replica would. */
  open(url: string): Promise<Store>
  /** `SELECT count(*) FROM <from>` on the database at `url`, read beside the stores. */
  count(url: string, from: string): Promise<number>
}

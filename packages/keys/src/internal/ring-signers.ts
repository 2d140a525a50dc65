import { KeyError } from '../errors.js'
import type { KeyStore, StoredKey } from '../ports.js'
import type { TokenSigner } from '../signer.js'
import type { KeyCipher } from './key-cipher.js'
import { createRs256Signer } from './rs256-signer.js'
import { parsePrivateJwk, parseStoredKeys } from './stored-key.js'

/**
 * The RS256 signers of one tenant's ring, by kid: each made from the stored private key when it
 * is first needed, and forgotten once its key stops signing.
 */
export class RingSigners {
  readonly #tenant: string
  readonly #store: KeyStore
  readonly #cipher: KeyCipher
  // Made when first needed: ten thousand rings, most of which never sign, need none of them.
  #signers: Map<string, TokenSigner> | undefined
  #opening: Map<string, Promise<TokenSigner>> | undefined

  constructor(tenant: string, store: KeyStore, cipher: KeyCipher) {
    this.#tenant = tenant
    this.#store = store
    this.#cipher = cipher
  }

  /**
   * A signer of the stored key `kid` that reads, opens and imports the private key on its first
   * signature: a process serving ten thousand tenants holds no private key, not even sealed, of
   * those that never sign. The load has proved that it opens.
   */
  lazy(kid: string): TokenSigner {
    return {
      alg: 'RS256',
      sign: async (claims) => {
        this.#opening ??= new Map()
        let opening = this.#opening.get(kid)
        if (opening === undefined) {
          // One read and one import however many first tokens arrive together.
          opening = this.#stored(kid).finally(() => this.#opening?.delete(kid))
          this.#opening.set(kid, opening)
        }
        return (await opening).sign(claims)
      },
    }
  }

  /** The signer of `key`, made now from its private key (which must open) unless it is cached. */
  async of(key: StoredKey): Promise<TokenSigner> {
    const cached = this.#signers?.get(key.kid)
    if (cached !== undefined) return cached
    const privateKey = this.#cipher.open(key.privateKey, key.tenant, key.kid)
    const signer = await createRs256Signer(
      parsePrivateJwk({ ...key, privateKey }),
      key.kid,
      key.tenant,
    )
    this.#signers ??= new Map()
    this.#signers.set(key.kid, signer)
    return signer
  }

  /**
   * Forgets the signers of every other kid: only the signing key (and the one published ahead)
   * sign, and a long-lived process must not hold every private key it has ever used.
   */
  keepOnly(kids: readonly (string | undefined)[]): void {
    for (const kid of this.#signers?.keys() ?? []) {
      if (!kids.includes(kid)) this.#signers?.delete(kid)
    }
  }

  async #stored(kid: string): Promise<TokenSigner> {
    const cached = this.#signers?.get(kid)
    if (cached !== undefined) return cached
    const key = parseStoredKeys(await this.#store.listKeys(this.#tenant), this.#tenant).find(
      (candidate) => candidate.kid === kid,
    )
    // Revoked or pruned since the load: the next reload gives the ring its new state.
    if (key === undefined || key.state !== 'active') {
      throw new KeyError(
        'ERR_NO_ACTIVE_KEY',
        `tenant "${this.#tenant}": key "${kid}" is no longer active`,
      )
    }
    return this.of(key)
  }
}

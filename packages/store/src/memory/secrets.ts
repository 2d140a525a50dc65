import type { SecretStore } from '@tessera/grants'
import { settle } from '../internal/settle.js'

/** Server-wide secrets in a Map; `open` throws once the store is closed. */
export function createMemorySecrets(open: () => void): { store: SecretStore; clear(): void } {
  const values = new Map<string, string>()
  const store: SecretStore = {
    getOrCreateSecret(name, candidate) {
      return settle(() => {
        open()
        const stored = values.get(name)
        if (stored !== undefined) return stored
        values.set(name, candidate)
        return candidate
      })
    },
  }
  return { store, clear: () => values.clear() }
}

import { createMemoryStore } from './memory/index.js'
import { runStoreContract } from './test-utils/contract/index.js'

runStoreContract('memory', () => Promise.resolve(createMemoryStore()))

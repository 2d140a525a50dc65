import { createMemoryStore } from './memory.js'
import { runStoreContract } from './test-utils/contract/index.js'

runStoreContract('memory', () => Promise.resolve(createMemoryStore()))

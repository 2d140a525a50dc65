import { createMemoryStore } from './memory.js'
import { describeStoreContract } from './test-utils/contract.js'

describeStoreContract('memory', () => Promise.resolve(createMemoryStore()))

import { createMemoryStore } from './memory/index.js'
import { describeStoreContract } from './test-utils/contract.js'

describeStoreContract('memory', () => Promise.resolve(createMemoryStore()))

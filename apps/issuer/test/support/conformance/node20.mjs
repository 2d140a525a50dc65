// Loaded with `node --import` when running the MCP conformance suite: it is built for Node 22 and
// imports `globSync` from `fs`, which Node 20 lacks. On such a Node its imports of `fs` resolve
// to `fs-with-glob-sync.mjs`, which adds the `glob` package's `globSync`.
import fs from 'node:fs'
import { register } from 'node:module'

if (typeof fs.globSync !== 'function') register('./fs-hooks.mjs', import.meta.url)

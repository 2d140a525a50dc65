// `node:fs` with the `glob` package's `globSync`, which Node 20's `fs` lacks.
export * from 'node:fs'
export { default } from 'node:fs'
export { globSync } from 'glob'

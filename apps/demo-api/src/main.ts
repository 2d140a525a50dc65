#!/usr/bin/env node
// The demo API's entry point: the only place that reads the environment and listens.
import { createApp } from './app.js'
import { parseSettings } from './settings.js'

function log(entry: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ time: Date.now(), ...entry })}\n`)
}

let settings
try {
  settings = parseSettings(process.env)
} catch (error) {
  process.stderr.write(`demo-api: bad settings\n${(error as Error).message}\n`)
  process.exit(1)
}

const { app } = createApp({
  ...settings,
  onEvent: (event) => {
    if (event.type !== 'token_rejected') log({ msg: 'verifier event', ...event })
  },
})
const server = app.listen(settings.port, settings.host, () => {
  const address = server.address()
  const port = typeof address === 'object' && address !== null ? address.port : settings.port
  log({
    msg: 'demo-api listening',
    url: `http://${settings.host}:${port}`,
    issuers: settings.issuers,
  })
})
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    server.close(() => process.exit(0))
    server.closeIdleConnections()
  })
}

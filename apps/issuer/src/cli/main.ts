#!/usr/bin/env node
/**
 * The `tessera` command line: the only place that reads the environment and flags.
 *
 * @module
 */
import { ConfigError } from '@tessera/config-schema'
import { KeyError } from '@tessera/keys'
import { StoreError } from '@tessera/store'
import { ProviderError } from '../providers.js'
import { checkConfigCommand } from './check-config.js'
import { parseCommandLine } from './flags.js'
import { hashPasswordCommand } from './hash-password.js'
import { keysCommand } from './keys.js'
import { serve } from './serve.js'

const USAGE = `Usage: tessera <command> [flags]

Commands:
  start            run the issuer (production: https issuer URLs, JWT_SECRET required)
  dev              run the issuer locally (http issuer URLs, ./examples, 127.0.0.1)
  check-config     validate settings, tenant files and provider scripts (--dev for dev defaults)
  keys list [--tenant T] [--json]
                   the RS256 keys of every tenant (or of T): kid, state, created, algorithm
  keys rotate --tenant T
                   make a new active key now; the old one stays in the JWKS for the grace
  keys revoke --tenant T --kid K
                   take a key out of the JWKS at once (compromise); an active one is replaced
  hash-password    read a password from the terminal or stdin and print its scrypt hash

Every setting is an environment variable and a flag: JWT_SECRET is --jwt-secret, PORT is
--port, TESSERA_CONFIG is --tessera-config (or --config), and so on. The keys commands read
them as start does (DATABASE_URL, TESSERA_CONFIG, KEY_ENCRYPTION_SECRET, JWKS_GRACE_HOURS),
or with dev's defaults given --dev; running issuers see their changes within 5 seconds.

With TESSERA_CONFIG_SOURCE=kubernetes, start and dev serve the Tenant resources of
TESSERA_KUBERNETES_NAMESPACE (default: the pod's own namespace) and TESSERA_CONFIG is the
directory of the provider scripts those Tenants name (docs/kubernetes-source.md).
`

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  switch (command) {
    case 'start':
    case 'dev': {
      const { settings } = parseCommandLine(rest)
      await serve(command, settings)
      return -1
    }
    case 'check-config': {
      const { settings, flags } = parseCommandLine(rest, { dev: { type: 'boolean' } })
      return checkConfigCommand(settings, flags.dev === true)
    }
    case 'keys':
      return keysCommand(rest)
    case 'hash-password':
      return hashPasswordCommand()
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE)
      return command === undefined ? 1 : 0
    default:
      process.stderr.write(`tessera: unknown command "${command}"\n\n${USAGE}`)
      return 1
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    // -1: a server is running and exits on a signal. A one-shot command is over when its work
    // is: a socket the Kubernetes client cannot abort (a watch it had begun) must not keep it
    // alive. Output is already written: stdout and stderr are synchronous for files and pipes.
    if (code >= 0) process.exit(code)
  },
  (error: unknown) => {
    if (error instanceof ConfigError || error instanceof ProviderError) {
      process.stderr.write(`tessera: configuration problems:\n${error.message}\n`)
    } else if (error instanceof StoreError) {
      process.stderr.write(`tessera: database: ${error.message}\n`)
    } else if (error instanceof KeyError) {
      // Key errors name tenants and kids, never key material or secrets.
      process.stderr.write(`tessera: ${error.message}\n`)
    } else if (
      error instanceof TypeError &&
      (error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION'
    ) {
      process.stderr.write(`tessera: ${error.message}\n`)
    } else {
      process.stderr.write(`tessera: ${(error as Error).stack ?? String(error)}\n`)
    }
    process.exitCode = 1
  },
)

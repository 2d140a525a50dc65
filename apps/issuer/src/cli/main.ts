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
import { MissingConfigError } from './config-directory.js'
import { parseCommandLine } from './flags.js'
import { hashPasswordCommand } from './hash-password.js'
import { HELP, USAGE, UsageError, wantsHelp } from './help.js'
import { keysCommand } from './keys.js'
import { PortInUseError } from './listen.js'
import { serve } from './serve.js'

/** Prints a command's help: on stdout when asked for, on stderr (exit 1) after a mistake. */
function help(text: string, asked: boolean): number {
  if (asked) {
    process.stdout.write(text)
    return 0
  }
  process.stderr.write(text)
  return 1
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  if (command !== undefined && HELP[command] !== undefined && command !== 'keys') {
    if (wantsHelp(rest)) return help(HELP[command], true)
  }
  switch (command) {
    case 'start':
    case 'dev': {
      const { settings } = parseCommandLine(command, rest)
      await serve(command, settings)
      return -1
    }
    case 'check-config': {
      const { settings, flags } = parseCommandLine(command, rest, { dev: { type: 'boolean' } })
      return checkConfigCommand(settings, flags.dev === true)
    }
    case 'keys':
      return keysCommand(rest)
    case 'hash-password':
      if (rest.length > 0) {
        // Nor a password: argv is visible to every user of the machine (ps).
        throw new UsageError(command, 'takes no arguments; it reads the password from stdin')
      }
      return hashPasswordCommand()
    case 'help': {
      const topic = rest.join(' ')
      if (topic === '' || wantsHelp(rest)) return help(USAGE, true)
      const text = HELP[topic]
      if (text === undefined) throw new UsageError('', `no command "${topic}"`)
      return help(text, true)
    }
    case '--help':
    case '-h':
      return help(USAGE, true)
    case undefined:
      return help(USAGE, false)
    default:
      throw new UsageError('', `unknown command "${command}"`)
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
    } else if (error instanceof UsageError) {
      const command = error.command === '' ? 'tessera' : `tessera ${error.command}`
      process.stderr.write(`${command}: ${error.message}; see ${command} --help\n`)
    } else if (error instanceof MissingConfigError) {
      process.stderr.write(`tessera ${error.command}: ${error.message}\n`)
    } else if (error instanceof PortInUseError) {
      process.stderr.write(`tessera: ${error.message}\n`)
    } else {
      process.stderr.write(`tessera: ${(error as Error).stack ?? String(error)}\n`)
    }
    process.exitCode = 1
  },
)

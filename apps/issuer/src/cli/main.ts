#!/usr/bin/env node
/**
 * The `tessera` command line: the only place that reads the environment and flags.
 *
 * @module
 */
import cluster from 'node:cluster'
import { ConfigError } from '@tessera/config-schema'
import { KeyError } from '@tessera/keys'
import { StoreError } from '@tessera/store'
import { exitProcess } from '../providers/process-guard.js'
import { ProviderError } from '../providers/scripts.js'
import { reportWorkerFailure } from '../cluster/ipc.js'
import { WorkerStartError } from '../cluster/supervisor.js'
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

/** What the command line prints on stderr for a failure: one line per problem, never a secret. */
function describeFailure(error: unknown): string {
  if (error instanceof ConfigError || error instanceof ProviderError) {
    return `tessera: configuration problems:\n${error.message}\n`
  }
  if (error instanceof StoreError) return `tessera: database: ${error.message}\n`
  // Key errors name tenants and kids, never key material or secrets.
  if (error instanceof KeyError) return `tessera: ${error.message}\n`
  if (error instanceof UsageError) {
    const command = error.command === '' ? 'tessera' : `tessera ${error.command}`
    return `${command}: ${error.message}; see ${command} --help\n`
  }
  if (error instanceof MissingConfigError) return `tessera ${error.command}: ${error.message}\n`
  if (error instanceof PortInUseError) return `tessera: ${error.message}\n`
  // Already described by the worker that met it, as above.
  if (error instanceof WorkerStartError) return error.text
  return `tessera: ${(error as Error).stack ?? String(error)}\n`
}

main(process.argv.slice(2)).then(
  (code) => {
    // -1: a server is running and exits on a signal. A one-shot command is over when its work
    // is: a socket the Kubernetes client cannot abort (a watch it had begun) must not keep it
    // alive. Output is already written: stdout and stderr are synchronous for files and pipes.
    if (code >= 0) exitProcess(code)
  },
  (error: unknown) => {
    const text = describeFailure(error)
    // A worker that cannot start tells the primary, which prints the problem once for all.
    if (cluster.isWorker) {
      reportWorkerFailure(text)
      return
    }
    process.stderr.write(text)
    process.exitCode = 1
  },
)

// The first step of `pnpm test`: makes sure what the test suites need outside node_modules is
// there, or stops at once with one line naming what is missing and the command that installs it.
//
// - Chromium (CHROMIUM_PATH, default /usr/bin/chromium), for the login-page tests.
// - PostgreSQL accepting connections on 127.0.0.1:5432 (or TESSERA_TEST_POSTGRES_URL's server).
//
// As root with apt-get, it installs Debian's chromium and postgresql when missing (one
// apt-get update), and starts an installed PostgreSQL that is down. Anywhere else it only checks.
import { spawnSync } from 'node:child_process'
import {
  accessSync,
  constants,
  existsSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs'
import { createConnection } from 'node:net'
import { fileURLToPath } from 'node:url'

export const DEFAULT_CHROMIUM = '/usr/bin/chromium'
const PG_ETC = '/etc/postgresql'

/**
 * @typedef {object} State what the machine has, as the probes found it
 * @property {boolean} root running as root
 * @property {boolean} apt apt-get is on the PATH
 * @property {string} chromiumPath where the tests look for Chromium
 * @property {boolean} chromium an executable is there
 * @property {string} postgresAt host:port the tests connect to
 * @property {boolean} postgresExternal TESSERA_TEST_POSTGRES_URL names the server
 * @property {string | undefined} postgresVersion the installed Debian cluster version, if any
 * @property {boolean} postgresReady the server accepts connections
 */

/**
 * @typedef {object} Plan what to do about a {@link State}
 * @property {string[]} install Debian packages to install with apt-get
 * @property {boolean} startPostgres start the Debian cluster (after installing, if it was)
 * @property {string | undefined} missing the one line to print and stop with, when this machine
 *   cannot be fixed from here
 */

/**
 * Decides, from what the probes found, what to install or start, or what to tell the user.
 *
 * @param {State} state
 * @returns {Plan}
 */
export function plan(state) {
  const canInstall = state.root && state.apt
  /** @type {{ what: string, pkg?: string, command?: string }[]} */
  const lacking = []
  let startPostgres = false
  if (!state.chromium) {
    lacking.push(
      state.chromiumPath === DEFAULT_CHROMIUM
        ? { what: `Chromium (${DEFAULT_CHROMIUM})`, pkg: 'chromium' }
        : // A path the user chose: installing the package would put nothing there.
          {
            what: `Chromium at CHROMIUM_PATH=${state.chromiumPath}`,
            command: 'point CHROMIUM_PATH at a Chromium executable',
          },
    )
  }
  if (!state.postgresReady) {
    if (state.postgresExternal) {
      lacking.push({
        what: `PostgreSQL at ${state.postgresAt} (TESSERA_TEST_POSTGRES_URL)`,
        command: 'start that server, or unset TESSERA_TEST_POSTGRES_URL',
      })
    } else if (state.postgresVersion !== undefined) {
      if (state.root) startPostgres = true
      else {
        lacking.push({
          what: `a running PostgreSQL at ${state.postgresAt}`,
          command: `sudo pg_ctlcluster --skip-systemctl-redirect ${state.postgresVersion} main start`,
        })
      }
    } else {
      lacking.push({ what: 'PostgreSQL', pkg: 'postgresql' })
      startPostgres = canInstall
    }
  }
  const unfixed = lacking.filter((item) => !(canInstall && item.pkg !== undefined))
  if (unfixed.length === 0) {
    return {
      install: lacking.flatMap((item) => (item.pkg === undefined ? [] : [item.pkg])),
      startPostgres,
      missing: undefined,
    }
  }
  // Something must be done by hand: stop before installing anything, with one line.
  const packages = unfixed.flatMap((item) => (item.pkg === undefined ? [] : [item.pkg]))
  const how = []
  if (packages.length > 0) {
    const apt = `apt-get install -y ${packages.join(' ')}`
    if (state.apt) how.push(state.root ? apt : `sudo ${apt}`)
    else how.push(`install ${packages.join(' and ')} (Debian: ${apt})`)
  }
  for (const item of unfixed) if (item.command !== undefined) how.push(item.command)
  return {
    install: [],
    startPostgres: false,
    missing:
      `pnpm test cannot run: missing ${unfixed.map((item) => item.what).join(', ')}; ` +
      `to fix: ${how.join(' && ')}`,
  }
}

/**
 * Probes, acts, probes again. `act` runs a step (`apt-get update`, an install, a cluster
 * start); `log` prints a progress line; the result is the line to stop with, if any.
 *
 * @param {{ probe: () => Promise<State>, act: (step: string[]) => boolean, log: (line: string) => void }} io
 * @returns {Promise<string | undefined>}
 */
export async function prepare({ probe, act, log }) {
  const before = await probe()
  const first = plan(before)
  if (first.missing !== undefined) return first.missing
  if (first.install.length === 0 && !first.startPostgres) return undefined
  if (first.install.length > 0) {
    log(`pnpm test: installing ${first.install.join(' ')} (apt-get)`)
    if (
      !act(['apt-get', 'update', '-qq']) ||
      !act(['apt-get', 'install', '-y', '-qq', ...first.install])
    ) {
      return `pnpm test cannot run: apt-get install ${first.install.join(' ')} failed; run it to see why`
    }
  }
  if (first.startPostgres) {
    const installed = first.install.includes('postgresql')
    if (installed) act(['tessera:trust-loopback'])
    const state = await probe()
    if (!state.postgresReady && state.postgresVersion !== undefined) {
      log(`pnpm test: starting PostgreSQL ${state.postgresVersion}`)
      act(['pg_ctlcluster', '--skip-systemctl-redirect', state.postgresVersion, 'main', 'start'])
    } else if (installed && state.postgresVersion !== undefined) {
      // Debian's package started it before the loopback rule was added: make it read it.
      act(['pg_ctlcluster', '--skip-systemctl-redirect', state.postgresVersion, 'main', 'reload'])
    }
  }
  // Whatever the steps printed, the machine decides: what is still missing is reported as for a
  // user who cannot install (the line names the command).
  const after = await probe()
  return plan({ ...after, root: false }).missing
}

// --- the real probes and steps ---------------------------------------------------------------

function onPath(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0
}

function executable(path) {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}

function postgresTarget() {
  const url = process.env.TESSERA_TEST_POSTGRES_URL
  if (url === undefined || url === '') return { host: '127.0.0.1', port: 5432, external: false }
  try {
    const { hostname, port } = new URL(url)
    return { host: hostname || 'localhost', port: Number(port || 5432), external: true }
  } catch {
    return { host: 'an unparsable URL', port: 0, external: true }
  }
}

/** Whether something accepts TCP connections there: pg_isready when installed, else a connect. */
function accepting(host, port) {
  if (port === 0) return Promise.resolve(false)
  if (onPath('pg_isready')) {
    const args = ['-q', '-h', host, '-p', String(port), '-t', '3']
    return Promise.resolve(spawnSync('pg_isready', args, { stdio: 'ignore' }).status === 0)
  }
  return new Promise((resolve) => {
    const socket = createConnection({ host, port, timeout: 3000 })
    const done = (ok) => {
      socket.destroy()
      resolve(ok)
    }
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
    socket.once('timeout', () => done(false))
  })
}

function postgresVersion() {
  if (!onPath('pg_ctlcluster') || !existsSync(PG_ETC)) return undefined
  const versions = readdirSync(PG_ETC).filter((name) => existsSync(`${PG_ETC}/${name}/main`))
  return versions.sort((a, b) => Number(b) - Number(a))[0]
}

/** @returns {Promise<State>} */
async function probe() {
  const chromiumPath = process.env.CHROMIUM_PATH || DEFAULT_CHROMIUM
  const target = postgresTarget()
  return {
    root: process.getuid?.() === 0,
    apt: onPath('apt-get'),
    chromiumPath,
    chromium: executable(chromiumPath),
    postgresAt: `${target.host}:${target.port}`,
    postgresExternal: target.external,
    postgresVersion: postgresVersion(),
    postgresReady: await accepting(target.host, target.port),
  }
}

/**
 * The tests connect as `postgres` without a password (trust on loopback, as CI's server does);
 * Debian's fresh cluster asks for one. Only done to a cluster this script has just installed.
 */
function trustLoopback() {
  const version = postgresVersion()
  if (version === undefined) return false
  const file = `${PG_ETC}/${version}/main/pg_hba.conf`
  const rules = 'host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\n'
  writeFileSync(file, rules + readFileSync(file, 'utf8'))
  return true
}

function act(step) {
  if (step[0] === 'tessera:trust-loopback') return trustLoopback()
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  const [command, ...args] = step
  return spawnSync(command, args, { stdio: ['ignore', 'ignore', 'inherit'], env }).status === 0
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const missing = await prepare({ probe, act, log: (line) => console.log(line) })
  if (missing !== undefined) {
    console.error(missing)
    process.exitCode = 1
  }
}

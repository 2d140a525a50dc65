/**
 * The help of every command. `--help` (or `-h`) prints it to stdout and exits 0; a command line
 * that is wrong prints the problem and this help to stderr and exits 1.
 *
 * @module
 */

const SETTINGS_AS_FLAGS = `Every setting is an environment variable and a flag: JWT_SECRET is --jwt-secret, PORT is
--port, TESSERA_CONFIG is --tessera-config (or --config), and so on (docs/settings.md).
`

export const USAGE = `Usage: tessera <command> [flags]

Commands:
  start            run the issuer (production: https issuer URLs, JWT_SECRET required)
  dev              run the issuer locally (http issuer URLs, ./examples, 127.0.0.1)
  check-config     validate settings, tenant files and provider scripts (--dev for dev defaults)
  keys list|rotate|revoke
                   list, rotate or revoke the RS256 keys of the tenants
  hash-password    read a password from the terminal or stdin and print its scrypt hash
  help [COMMAND]   this help, or a command's

Run tessera COMMAND --help for a command's flags.

${SETTINGS_AS_FLAGS}
With TESSERA_CONFIG_SOURCE=kubernetes, start and dev serve the Tenant resources of
TESSERA_KUBERNETES_NAMESPACE (default: the pod's own namespace) and TESSERA_CONFIG is the
directory of the provider scripts those Tenants name (docs/kubernetes-source.md).

Exit status: 0 done (or stopped by SIGTERM/SIGINT), 1 a problem, printed on stderr.
`

const START = `Usage: tessera start [setting flags]

Runs the issuer for production: reads the tenants under TESSERA_CONFIG (default ./config),
opens DATABASE_URL (default sqlite:./data/tessera.db) and listens on HOST:PORT (default
0.0.0.0:3000) and on ADMIN_HOST:ADMIN_PORT (default 127.0.0.1:9464). JWT_SECRET is required as
soon as a tenant signs with HS256. Every problem stops it before it listens, one line each.

  --workers N      run N processes on the port (WORKERS; auto = one per core; default 1)

${SETTINGS_AS_FLAGS}`

const DEV = `Usage: tessera dev [setting flags]

Runs the issuer locally: as start, but TESSERA_CONFIG defaults to ./examples, HOST to
127.0.0.1, issuer URLs are http://, and a missing JWT_SECRET is replaced by a random one for
this process (with a warning). pnpm start is tessera dev after a build.

${SETTINGS_AS_FLAGS}`

const CHECK_CONFIG = `Usage: tessera check-config [--dev] [--config DIR] [setting flags]

Validates the settings, every tenant file and every provider script as start would serve them
(with --dev: as dev would, so JWT_SECRET may be missing and TESSERA_CONFIG defaults to
./examples), prints the tenants and exits 0, or prints every problem and exits 1.

  --dev            dev's defaults and rules instead of start's
  --config DIR     the tenant YAML (a directory or a file); TESSERA_CONFIG

${SETTINGS_AS_FLAGS}`

const KEYS = `Usage: tessera keys <list|rotate|revoke> [flags]

Inspects and changes the RS256 keys stored in DATABASE_URL; running issuers see the changes
within 5 seconds. Settings are read as start reads them (DATABASE_URL, TESSERA_CONFIG,
KEY_ENCRYPTION_SECRET, JWKS_GRACE_HOURS), or with dev's defaults given --dev.

  keys list [--tenant T] [--json]
                   the keys of every tenant (or of T): kid, state, created, algorithm
  keys rotate --tenant T [--now]
                   make a new key, published at once, signing after KEY_PUBLISH_AHEAD_SECONDS
                   (--now: at once); the old one stays in the JWKS for the grace
  keys revoke --tenant T --kid K
                   take a key out of the JWKS at once (compromise); an active one is replaced

  --dev            dev's defaults (./examples, the same database as pnpm start)
  --config DIR     the tenant YAML; TESSERA_CONFIG

Run tessera keys SUBCOMMAND --help for one subcommand.
`

const KEYS_LIST = `Usage: tessera keys list [--tenant T] [--json] [--dev] [setting flags]

Prints the RS256 keys of every tenant, or of tenant T: kid, state (active; next, with the time
it starts signing; retired until a time; revoked), creation time and algorithm. --json prints
an array of { tenant, kid, state, createdAt, signsFrom?, retiredAt?, publishedUntil?, alg }
instead.
`

const KEYS_ROTATE = `Usage: tessera keys rotate --tenant T [--now] [--dev] [setting flags]

Makes a new key for tenant T (which must sign with RS256). It is published at once and signs
KEY_PUBLISH_AHEAD_SECONDS later (default 60), so that verifiers holding the JWKS from a moment
ago can refetch before they meet its kid; until then the previous key signs. Running issuers
switch at that instant and retire the previous key: it stays in the JWKS for
JWKS_GRACE_HOURS, so tokens it signed keep verifying.

  --now            sign with the new key at once (an emergency: verifiers that fetched the
                   JWKS within their cooldown refuse its tokens until they may refetch)
`

const KEYS_REVOKE = `Usage: tessera keys revoke --tenant T --kid K [--dev] [setting flags]

Takes key K of tenant T out of the JWKS at once, for a compromised key: tokens it signed stop
verifying. Revoking the active key makes a new one. Revoking a revoked key changes nothing.
`

const HASH_PASSWORD = `Usage: tessera hash-password

Reads one password and prints its scrypt hash, for a provider script's user table. At a
terminal the password is typed without echo and ends with Enter; from a pipe or file, the whole
of stdin is the password, less ONE trailing newline (\\n or \\r\\n), so
  echo 'wonderland-42' | tessera hash-password
and printf %s 'wonderland-42' | tessera hash-password give the same hash. Any other whitespace
is part of the password. The password is never taken from the arguments (ps would show it).
`

/** Help by command path: `keys list` is the help of `tessera keys list`. */
export const HELP: Readonly<Record<string, string>> = {
  start: START,
  dev: DEV,
  'check-config': CHECK_CONFIG,
  keys: KEYS,
  'keys list': KEYS_LIST,
  'keys rotate': KEYS_ROTATE,
  'keys revoke': KEYS_REVOKE,
  'hash-password': HASH_PASSWORD,
}

/** Whether the arguments ask for help; `--` ends the flags, as for the parser. */
export function wantsHelp(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === '--') return false
    if (arg === '--help' || arg === '-h') return true
  }
  return false
}

/**
 * A command line that cannot be run: printed as `tessera COMMAND: message`, with a pointer to
 * the command's help, and exit 1.
 */
export class UsageError extends Error {
  constructor(
    readonly command: string,
    message: string,
  ) {
    super(message)
    this.name = 'UsageError'
  }
}

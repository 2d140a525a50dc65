import { formatConfigIssue } from '@tessera/config-schema'
import type { ConfigIssue } from '@tessera/config-schema'
import type { Logger } from 'pino'

/**
 * The warning `tessera dev` logs for a client secret shorter than 16 characters, which `start`
 * refuses: one line naming the file, the field path and the rule. The issue never holds the
 * secret, only where it is and, for `{env: VAR}`, the variable's name.
 */
export function warnShortClientSecret(logger: Logger): (issue: ConfigIssue) => void {
  return (issue) => {
    logger.warn(
      { problem: formatConfigIssue(issue) },
      'client secret too short: tessera dev serves it, tessera start refuses it',
    )
  }
}

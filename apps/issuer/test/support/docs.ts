import { join } from 'node:path'
import { parseConfig } from '@tessera/config-schema'
import type { ParseConfigResult } from '@tessera/config-schema'
import { FIXTURES, JWT_SECRET } from './issuer.js'

/** The fenced blocks of one language in `text`, in order. */
export function codeBlocks(text: string, language: string): string[] {
  return [...text.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map(
    (match) => match[1]!,
  )
}

/**
 * Parses `clients` as a doc page shows them, inside a one-tenant config whose other parts
 * (hosts, the basic fixture's users) the page leaves out; `file` is where issues say they are.
 */
export function parseDocClients(
  file: string,
  clients: unknown,
  env: Record<string, string> = {},
): ParseConfigResult {
  return parseConfig(
    [
      {
        file,
        value: {
          name: 'docs',
          config: {
            hosts: ['docs.test'],
            providers: [join(FIXTURES, 'basic', 'providers', 'users.mjs')],
            clients,
          },
        },
      },
    ],
    { env, jwtSecret: JWT_SECRET },
  )
}

import { hashPassword } from '../providers/password-hash.js'

/** Reads a password without echoing it when a person types it, or from piped stdin. */
async function readPassword(): Promise<string> {
  const stdin = process.stdin
  if (!stdin.isTTY) {
    const chunks: Buffer[] = []
    for await (const chunk of stdin) chunks.push(chunk as Buffer)
    return Buffer.concat(chunks)
      .toString('utf8')
      .replace(/\r?\n$/, '')
  }
  process.stderr.write('Password: ')
  stdin.setRawMode(true)
  stdin.resume()
  stdin.setEncoding('utf8')
  return new Promise((resolve, reject) => {
    let typed = ''
    const onData = (key: string): void => {
      for (const char of key) {
        if (char === '\r' || char === '\n') {
          stdin.setRawMode(false)
          stdin.pause()
          stdin.off('data', onData)
          process.stderr.write('\n')
          resolve(typed)
          return
        }
        if (char === '\u0003') {
          stdin.setRawMode(false)
          reject(new Error('cancelled'))
          return
        }
        typed = char === '\u007f' ? typed.slice(0, -1) : typed + char
      }
    }
    stdin.on('data', onData)
  })
}

/**
 * `tessera hash-password`: prints a scrypt hash for a provider script's user table. The
 * password comes from the terminal or stdin, never from argv (which `ps` shows).
 */
export async function hashPasswordCommand(): Promise<number> {
  const password = await readPassword()
  if (password === '') {
    process.stderr.write('tessera hash-password: empty password\n')
    return 1
  }
  process.stdout.write(`${await hashPassword(password)}\n`)
  return 0
}

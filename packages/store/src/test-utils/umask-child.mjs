// For sqlite.test.ts: opens a store at FILE through the built package (in a process the test
// starts under umask 000), writes a secret and a mark, and keeps it open (so that the -wal and
// -shm files exist) until "go" arrives on stdin. It also writes CONTROL with Node's default mode
// (0666 less the umask), which shows the umask the process really had.
//
//   node umask-child.mjs FILE CONTROL
import { once } from 'node:events'
import { writeFileSync } from 'node:fs'
import process from 'node:process'
import { openSqliteStore } from '../../dist/index.js'

const [file, control] = process.argv.slice(2)
const store = await openSqliteStore(file)
await store.secrets.getOrCreateSecret('login-form-key', 'a-secret-value')
await store.marks.mark('acme', 'jti', 'j-1', Date.now() + 60_000, Date.now())
writeFileSync(control, '')
process.stdout.write('ready\n')
await once(process.stdin, 'data')
await store.close()
process.stdin.destroy()

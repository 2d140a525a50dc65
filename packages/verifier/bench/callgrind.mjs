// `node bench/callgrind.mjs` (after `pnpm build`; needs valgrind): instructions executed per
// verification, counted by callgrind, which a busy machine does not change the way it changes
// time. Each case runs in its own process under `valgrind --tool=callgrind`, twice: warm-up, then
// N and then 2N calls; the difference of the two totals over N leaves out start-up, warm-up and
// everything else that does not grow with the calls. Cases: `verify` and the Koa `bearer`
// middleware, HS256 and RS256, token cache off and on.
// Environment: BENCH_CALLS (N, default 2000), BENCH_CASES (comma-separated; default all).
// `node bench/callgrind.mjs <case> <calls>` is one such process: it makes the calls and exits.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const CASES = [
  'verify-hs',
  'verify-hs-cached',
  'verify-rs',
  'verify-rs-cached',
  'koa-hs',
  'koa-rs',
  'koa-rs-cached',
]
const WARM_UP = 2000

async function runCase(name, calls) {
  // Imported here only: the parent never builds a verifier.
  const { bearer } = await import('../dist/koa.js')
  const { benchVerifier, tokens } = await import('./fixtures.mjs')
  const alg = name.includes('-hs') ? 'HS256' : 'RS256'
  const verifier = benchVerifier(name.endsWith('-cached'))
  let run
  if (name.startsWith('verify')) {
    const token = tokens[alg]
    run = () => verifier.verify(token)
  } else {
    const middleware = bearer(verifier)
    const header = `Bearer ${tokens[alg]}`
    const next = () => Promise.resolve()
    run = async () => {
      const ctx = { req: { headers: { authorization: header } }, state: {}, status: 404 }
      await middleware(ctx, next)
      if (ctx.state.auth === undefined) throw new Error('the token was refused')
    }
  }
  for (let i = 0; i < WARM_UP + calls; i += 1) await run()
}

function instructions(name, calls) {
  const dir = mkdtempSync(join(tmpdir(), 'verifier-callgrind-'))
  try {
    const out = join(dir, 'callgrind.out')
    const result = spawnSync(
      'valgrind',
      [
        '--tool=callgrind',
        `--callgrind-out-file=${out}`,
        process.execPath,
        fileURLToPath(import.meta.url),
        name,
        String(calls),
      ],
      { encoding: 'utf8' },
    )
    if (result.status !== 0) throw new Error(`${name} ${calls}: ${result.stderr.slice(-2000)}`)
    const totals = /^(?:summary|totals): (\d+)/m.exec(readFileSync(out, 'utf8'))
    if (totals === null) throw new Error(`${name} ${calls}: no totals in the callgrind output`)
    return Number(totals[1])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (process.argv[2] !== undefined) {
  await runCase(process.argv[2], Number(process.argv[3]))
} else {
  const calls = Number(process.env.BENCH_CALLS ?? 2000)
  const cases = process.env.BENCH_CASES?.split(',') ?? CASES
  console.log(`| case | Ir per call (${calls} → ${2 * calls} calls) |`)
  console.log('|---|---:|')
  for (const name of cases) {
    const once = instructions(name, calls)
    const twice = instructions(name, 2 * calls)
    console.log(`| ${name} | ${Math.round((twice - once) / calls)} |`)
  }
}

import type { FetchLike } from '../options.js'

/** The largest JWKS document accepted; a Tessera JWKS with a few RSA keys is about 2 KiB. */
export const MAX_JWKS_BYTES: number = 64 * 1024

/** Why a JWKS fetch failed; `message` is a short reason for events and logs. */
export class JwksFetchError extends Error {
  override readonly name = 'JwksFetchError' as const
}

/**
 * GETs a JWKS document and returns it parsed as JSON, or throws {@link JwksFetchError}.
 * The whole exchange, body included, must end within `timeoutMs` (an injected fetch that
 * ignores the abort signal is abandoned all the same); redirects are refused, since the JWKS
 * location comes from configuration alone; the body is read as a stream and abandoned past
 * {@link MAX_JWKS_BYTES}.
 */
export async function fetchJwksDocument(
  fetchImpl: FetchLike,
  uri: string,
  timeoutMs: number,
): Promise<unknown> {
  const controller = new AbortController()
  let timer: ReturnType<typeof setTimeout> | undefined
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new JwksFetchError(`timed out after ${timeoutMs} ms`))
      controller.abort()
    }, timeoutMs)
  })
  const work = download(fetchImpl, uri, controller.signal)
  // Whichever loses the race must not surface as an unhandled rejection.
  work.catch(() => undefined)
  try {
    return await Promise.race([work, timedOut])
  } finally {
    clearTimeout(timer)
  }
}

async function download(fetchImpl: FetchLike, uri: string, signal: AbortSignal): Promise<unknown> {
  let response: Response
  try {
    response = await fetchImpl(uri, {
      method: 'GET',
      headers: { accept: 'application/jwk-set+json, application/json' },
      redirect: 'manual',
      signal,
    })
  } catch (error) {
    throw new JwksFetchError(`request failed: ${describeFailure(error)}`, { cause: error })
  }
  if (response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400)) {
    await discard(response)
    throw new JwksFetchError(`redirect (${response.status}) refused`)
  }
  if (response.status !== 200) {
    await discard(response)
    throw new JwksFetchError(`status ${response.status}`)
  }
  const declared = Number(response.headers.get('content-length') ?? '0')
  if (declared > MAX_JWKS_BYTES) {
    await discard(response)
    throw new JwksFetchError(`body over ${MAX_JWKS_BYTES} bytes`)
  }
  const bytes = await readLimited(response, MAX_JWKS_BYTES)
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch (error) {
    throw new JwksFetchError('body is not UTF-8', { cause: error })
  }
  try {
    return JSON.parse(text) as unknown
  } catch (error) {
    throw new JwksFetchError('body is not JSON', { cause: error })
  }
}

async function readLimited(response: Response, limit: number): Promise<Uint8Array> {
  if (response.body === null) return new Uint8Array()
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      total += value.byteLength
      if (total > limit) {
        await reader.cancel().catch(() => undefined)
        throw new JwksFetchError(`body over ${limit} bytes`)
      }
      chunks.push(value)
    }
  } catch (error) {
    if (error instanceof JwksFetchError) throw error
    throw new JwksFetchError('body could not be read', { cause: error })
  }
  const bytes = new Uint8Array(total)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}

async function discard(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => undefined)
}

/**
 * What made a request fail, in a few words for events and logs: the system error's code and
 * what it was about (`ENOTFOUND globex.localhost`, `ECONNREFUSED 127.0.0.1:3000`), found along
 * the `cause` chain, since fetch itself only says "fetch failed".
 */
export function describeFailure(error: unknown): string {
  let fallback: string | undefined
  let current: unknown = error
  for (let depth = 0; depth < 8 && current instanceof Error; depth += 1) {
    const { code, hostname, address, port } = current as NodeJS.ErrnoException & {
      hostname?: unknown
      address?: unknown
      port?: unknown
    }
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(code)) {
      if (typeof hostname === 'string') return clip(`${code} ${hostname}`)
      if (typeof address === 'string') {
        return clip(typeof port === 'number' ? `${code} ${address}:${port}` : `${code} ${address}`)
      }
      // Happy eyeballs reports every address it tried in an AggregateError.
      if (current instanceof AggregateError) {
        const inner = current.errors.find((entry) => entry instanceof Error)
        if (inner !== undefined) return describeFailure(inner)
      }
      const message = current.message.trim()
      return message === '' || message.includes(code) ? code : clip(`${code}: ${message}`)
    }
    if (current.message !== '' && current.message !== 'fetch failed') fallback ??= current.message
    current = current.cause
  }
  return clip(fallback ?? 'unknown error')
}

function clip(text: string): string {
  // An injected fetch may name a proxy URL with credentials in its message: drop the userinfo.
  const line = text
    .replace(/\s+/g, ' ')
    .replace(/\/\/[^/\s@]*@/g, '//')
    .trim()
  return line.length > 200 ? `${line.slice(0, 200)}…` : line
}

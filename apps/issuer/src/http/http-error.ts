/**
 * An error the HTTP edge raises itself (unknown host, wrong method, body problems), rendered
 * like an OAuth error so every client-facing error body has one shape.
 */
export class HttpError extends Error {
  override readonly name = 'HttpError'
  readonly status: number
  readonly code: string
  readonly description: string
  readonly headers: Readonly<Record<string, string>>

  constructor(
    status: number,
    code: string,
    description: string,
    headers: Readonly<Record<string, string>> = {},
  ) {
    super(`${code}: ${description}`)
    this.status = status
    this.code = code
    this.description = description
    this.headers = headers
  }
}

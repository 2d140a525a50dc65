import type { ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'

const REASONS: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
}

/**
 * Answers what Node's HTTP parser refuses before any app sees a request (malformed HTTP,
 * headers too large, a request not received within the server's timeouts), as Node's own
 * `clientError` default does, but with the error body and headers of every other answer.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage
  // A response already on its way cannot be followed by another one on the same bytes.
  if (error.code !== 'ECONNRESET' && socket.writable && inFlight?.headersSent !== true) {
    const status =
      error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 408
        : error.code === 'HPE_HEADER_OVERFLOW'
          ? 431
          : 400
    const body = JSON.stringify({
      error: 'invalid_request',
      error_description:
        status === 408
          ? 'the request was not received in time'
          : status === 431
            ? 'request headers too large'
            : 'malformed HTTP request',
    })
    socket.write(
      `HTTP/1.1 ${status} ${REASONS[status]}\r\n` +
        'Connection: close\r\n' +
        'Cache-Control: no-store\r\n' +
        'X-Content-Type-Options: nosniff\r\n' +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    )
  }
  socket.destroy()
}

/** Argument checks shared by the adapters, so that both refuse the same misuse the same way. */
export function checkThrottleArgs(method: string, now: number, windowMs?: number): void {
  if (!Number.isFinite(now)) throw new TypeError(`${method}: now must be epoch milliseconds`)
  if (windowMs !== undefined && !(Number.isFinite(windowMs) && windowMs > 0)) {
    throw new TypeError(`${method}: windowMs must be a positive number of milliseconds`)
  }
}

import { chromium } from 'playwright-core'
import type { Browser } from 'playwright-core'

/**
 * Debian's headless Chromium (CHROMIUM_PATH, default /usr/bin/chromium), with `host` resolved to
 * the issuer on loopback without DNS: tenants are told apart by their host names.
 */
export function launchChromium(host: string): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--headless',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--host-resolver-rules=MAP ${host} 127.0.0.1`,
    ],
  })
}

import { describe, expect, it } from 'vitest'
import { MAX_SHOWN_NAME_LENGTH, renderConsentPage, shownText } from './consent.js'
import type { ConsentPageView } from './consent.js'

const HOSTILE = `"><script>alert('x')</script><img src=x onerror=alert(1)>&amp;`
const ESCAPED =
  '&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&amp;amp;'

const view: ConsentPageView = {
  tenantName: 'acme',
  clientName: 'Acme Agent',
  userName: 'Alice Liddell',
  scopes: ['tools:read', 'tools:call'],
  resources: ['https://mcp.acme.test/mcp'],
  csrfToken: 'sealed-token',
}

describe('the consent page', () => {
  it('names the client, the user, each scope on its own line and the resource', () => {
    const page = renderConsentPage(view)
    expect(page).toContain('<h1>Allow <bdi class="client-name">Acme Agent</bdi>?</h1>')
    expect(page).toContain('<strong><bdi>Alice Liddell</bdi></strong> at <strong>acme</strong>')
    expect(page).toContain('<ul class="scopes">\n<li>tools:read</li>\n<li>tools:call</li>\n</ul>')
    expect(page).toContain(
      '<p><strong>Resource</strong></p>\n<ul class="resources">\n<li>https://mcp.acme.test/mcp</li>\n</ul>',
    )
    expect(page).not.toContain('client-host')
    expect(page).toContain('<input type="hidden" name="csrf_token" value="sealed-token">')
    expect(page).toContain('<form method="post" action="/authorize">')
    expect(page.match(/<button[^>]*>[^<]*<\/button>/g)).toEqual([
      '<button type="submit" name="decision" value="allow">Allow</button>',
      '<button type="submit" name="decision" value="deny">Deny</button>',
    ])
    expect(page).not.toContain('<script')
  })

  it('shows the host of a metadata document client, and says when none is asked for', () => {
    const page = renderConsentPage({
      ...view,
      clientHost: 'tools.example.com:8443',
      scopes: [],
      resources: ['https://a.test/x', 'https://b.test/y'],
    })
    expect(page).toContain(
      ' from <strong class="client-host"><bdi>tools.example.com:8443</bdi></strong> asks',
    )
    expect(page).toContain('<li>no scopes: only that you signed in</li>')
    expect(page).toContain('<p><strong>Resources</strong></p>')
  })

  it('escapes hostile values in every field', () => {
    const page = renderConsentPage({
      tenantName: HOSTILE,
      clientName: HOSTILE,
      clientHost: HOSTILE,
      userName: HOSTILE,
      scopes: [HOSTILE],
      resources: [HOSTILE],
      csrfToken: HOSTILE,
    })
    expect(page).not.toContain('<script')
    expect(page).not.toContain('<img')
    expect(page).not.toContain(HOSTILE)
    expect(page.match(/<main>/g)).toHaveLength(1)
    expect(page.match(/<form /g)).toHaveLength(1)
    expect(page).toContain(`name="csrf_token" value="${ESCAPED}"`)
    expect(page).toContain(`<bdi class="client-name">${ESCAPED}</bdi>`)
    expect(page).toContain(`<li>${ESCAPED}</li>`)
  })

  it('strips bidirectional overrides and other invisible characters from names', () => {
    // "Google" spelled backwards behind a right-to-left override, a zero-width space, a newline.
    const page = renderConsentPage({
      ...view,
      clientName: 'Safe\u202Eelgoog\u202C\u200B Tool\n\u2028by\u0000 Acme\u2066',
      userName: '\u202Bmallory',
    })
    expect(page).toContain('<bdi class="client-name">Safeelgoog Tool by Acme</bdi>')
    expect(page).toContain('<bdi>mallory</bdi>')
    expect(page).not.toMatch(/[\p{Cf}\u2028]/u)
    expect(page).not.toContain(String.fromCharCode(0))
  })

  it('cuts a 10 KB name to a line, and keeps the page small', () => {
    const page = renderConsentPage({ ...view, clientName: 'A'.repeat(10 * 1024) })
    expect(page).toContain(
      `<bdi class="client-name">${'A'.repeat(MAX_SHOWN_NAME_LENGTH - 1)}…</bdi>`,
    )
    expect(page).not.toContain('A'.repeat(MAX_SHOWN_NAME_LENGTH))
    expect(page.length).toBeLessThan(4096)
  })

  it('falls back to a label for a name made only of invisible characters', () => {
    expect(renderConsentPage({ ...view, clientName: '\u202E\u200B ' })).toContain(
      '<bdi class="client-name">(unnamed application)</bdi>',
    )
  })
})

describe('shownText', () => {
  it('counts characters, not UTF-16 units, and cuts with an ellipsis', () => {
    expect(shownText('😀'.repeat(80))).toBe('😀'.repeat(80))
    expect(shownText('😀'.repeat(81))).toBe(`${'😀'.repeat(79)}…`)
    expect(shownText('  a \t b  ')).toBe('a b')
    expect(shownText('abcdef', 4)).toBe('abc…')
  })
})

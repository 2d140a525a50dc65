import { describe, expect, it } from 'vitest'
import { html, raw, SafeHtml } from './html.js'

describe('html', () => {
  it('escapes every interpolated string, in content and in attribute values', () => {
    const value = `<b title="x">Tom & Jerry's</b>`
    expect(html`<p>${value}</p><input value="${value}"><input value='${value}'>`.value).toBe(
      '<p>&lt;b title=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/b&gt;</p>' +
        '<input value="&lt;b title=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/b&gt;">' +
        "<input value='&lt;b title=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/b&gt;'>",
    )
  })

  it('escapes an entity again rather than trusting it', () => {
    expect(html`${'&lt;script&gt;'}`.value).toBe('&amp;lt;script&amp;gt;')
  })

  it('keeps markup made by html or marked raw, and escapes it nowhere else', () => {
    const inner = html`<strong>${'<i>'}</strong>`
    expect(html`<p>${inner}${raw('<br>')}</p>`.value).toBe('<p><strong>&lt;i&gt;</strong><br></p>')
    // A string that merely looks like markup is text, whatever it contains.
    expect(html`${'<br>'}`.value).toBe('&lt;br&gt;')
  })

  it('does not take an object that only claims to be safe', () => {
    const forged = { value: '<script>', toString: () => '<script>' } as unknown as string
    expect(html`${forged}`.value).toBe('&lt;script&gt;')
  })

  it('renders lists item by item, each escaped, and nothing for null, undefined and false', () => {
    const items = ['<a>', html`<li>${'&'}</li>`, ['"', 1]]
    expect(html`${items}`.value).toBe('&lt;a&gt;<li>&amp;</li>&quot;1')
    expect(html`[${null}${undefined}${false}]`.value).toBe('[]')
    const show = false
    expect(html`${show && html`<p>hidden</p>`}`.value).toBe('')
  })

  it('gives a SafeHtml that reads as its markup', () => {
    const out = html`<p>${'x'}</p>`
    expect(out).toBeInstanceOf(SafeHtml)
    expect(String(out)).toBe('<p>x</p>')
  })
})

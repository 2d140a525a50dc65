import { createHash } from 'node:crypto'

/**
 * Markup that is already safe: made by {@link html} (whose values were escaped) or marked with
 * {@link raw}. Anything else interpolated into `html` is text and gets escaped.
 */
export class SafeHtml {
  constructor(readonly value: string) {}

  toString(): string {
    return this.value
  }
}

/** What `html` accepts in a `${}`: text, safe markup, lists of them, or nothing at all. */
export type HtmlValue = string | number | SafeHtml | readonly HtmlValue[] | null | undefined | false

const ENTITIES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

/** Text for HTML element content and quoted attribute values (single or double). */
function escape(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ENTITIES[char] ?? char)
}

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.value
  if (Array.isArray(value)) return (value as readonly HtmlValue[]).map(render).join('')
  if (value === null || value === undefined || value === false) return ''
  return escape(String(value))
}

/**
 * A tagged template whose interpolations are escaped unless they are {@link SafeHtml}, so the
 * safe thing is what a template does by default: a value can only become markup by being built
 * with `html` or passed through `raw` on purpose. `null`, `undefined` and `false` render as
 * nothing, which lets `${condition && html`...`}` leave an element out.
 *
 * Prettier leaves the templates of this folder as written (an override in .prettierrc.json):
 * their bytes are the page, and the inline style must keep the hash the CSP names.
 *
 * @example
 * html`<p class="alert">${message}</p>` // message's <, >, &, " and ' are escaped
 */
export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  let out = strings[0] ?? ''
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? '')
  return new SafeHtml(out)
}

/** Marks trusted markup (never anything a request or a configuration supplied) as safe. */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup)
}

const STYLE = `
body{margin:0;font:16px/1.5 system-ui,sans-serif;background:#f4f5f7;color:#1d2330}
main{max-width:22rem;margin:10vh auto;padding:2rem;background:#fff;border-radius:.75rem;box-shadow:0 1px 4px #0002}
h1{font-size:1.4rem;margin:0 0 .25rem}
p.context{margin:0 0 1.5rem;color:#5a6272}
label{display:block;font-weight:600;margin:1rem 0 .25rem}
input{box-sizing:border-box;width:100%;padding:.6rem;border:1px solid #b8bfcc;border-radius:.4rem;font:inherit}
button{margin-top:1.5rem;width:100%;padding:.7rem;border:0;border-radius:.4rem;background:#2f5bea;color:#fff;font:inherit;font-weight:600;cursor:pointer}
.alert{padding:.75rem;border-radius:.4rem;background:#fdecec;color:#8a1c1c;margin:0 0 1rem}
`.trim()

/** The CSP source for the one inline stylesheet: no script, no other style is ever allowed. */
export const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`

/** A whole page around `body`, as the string a response sends. */
export function page(title: string, body: SafeHtml): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<style>${raw(STYLE)}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`.value
}

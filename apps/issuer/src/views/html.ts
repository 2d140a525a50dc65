import { createHash } from 'node:crypto'

/** Escapes text for HTML element content and double-quoted attribute values. */
export function escapeHtml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;')
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

/** A whole page around `body`; every value inside `body` must already be escaped. */
export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`
}

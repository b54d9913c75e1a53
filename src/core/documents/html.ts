/** The frame of every page of the site, and text for HTML: no route, no output, so any page module may read it. */

const STYLE =
  "body{font-family:system-ui,sans-serif;line-height:1.5;max-width:56rem;margin:2rem auto;padding:0 1rem;color:#222}" +
  "table{border-collapse:collapse}th,td{text-align:left;vertical-align:top;padding:.25rem 1rem .25rem 0}" +
  "th{font-weight:600}code{font-size:.95em}td.n{text-align:right}";

/** An HTML5 page in UTF-8: every page of the site has this frame; `head` adds to it, `style` replaces the pages' own. */
export function page(title: string, body: string[], options: { readonly head?: readonly string[]; readonly style?: string } = {}): string {
  return [
    "<!DOCTYPE html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    ...(options.head ?? []),
    `<title>${html(title)}</title>`,
    `<style>${options.style ?? STYLE}</style>`,
    "</head>",
    "<body>",
    ...body,
    "</body>",
    "</html>",
    "",
  ].join("\n");
}

/** Text for HTML content and attribute values. */
export function html(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

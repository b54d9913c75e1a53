import { CONTENT_SECURITY_POLICY } from "./map.ts";
import { html, page } from "./pages.ts";
import { fileFor, urlFor } from "../routes.ts";

/** Swagger UI's files the page loads, copied beside it from swagger-ui-dist (io/write/docs-assets.ts). */
export const SWAGGER_UI_SCRIPT = "swagger-ui-bundle.js";
export const SWAGGER_UI_STYLE = "swagger-ui.css";
/** What the build copies from swagger-ui-dist: the two files, and what its licence asks to go with copies. */
export const SWAGGER_UI_ASSETS: readonly string[] = [
  SWAGGER_UI_SCRIPT,
  SWAGGER_UI_STYLE,
  "LICENSE",
  "NOTICE",
  `${SWAGGER_UI_SCRIPT}.LICENSE.txt`,
];

/**
 * Every file of the reference's folder with its Content-Type, for a host whose API header rule would
 * cover the folder and cannot leave it out; the others type these by name as they do the map's.
 */
export function docsFiles(): { readonly file: string; readonly type: string }[] {
  const files = [fileFor("docs"), fileFor("docsScript"), ...SWAGGER_UI_ASSETS.map((asset) => fileFor("swaggerUi", { asset }))];
  return files.map((file) => ({ file, type: typeOf(file) }));
}

function typeOf(file: string): string {
  const type = file.endsWith(".html")
    ? "text/html"
    : file.endsWith(".js")
      ? "text/javascript"
      : file.endsWith(".css")
        ? "text/css"
        : "text/plain";
  return `${type}; charset=utf-8`;
}

/**
 * `/api/v1/docs/index.html`: the API reference, Swagger UI rendering this build's own OpenAPI
 * document (so a `--brand` build shows its field names) with "try it out" against the same host.
 * No inline script (the map's policy): the page's script, assets/docs/docs.js, reads the document's
 * URL from the root element. Every URL is absolute, so the page works with or without the slash.
 */
export function docsPage(): string {
  const openapi = urlFor("openapi");
  return page(
    "API reference — Mesh Network Topology Read API v1",
    [
      `<noscript><p>The reference needs JavaScript. The same description, as JSON: <a href="${html(openapi)}"><code>${html(openapi)}</code></a>.</p></noscript>`,
      `<div id="swagger-ui" data-url="${html(openapi)}"></div>`,
      `<script src="${html(fileFor("swaggerUi", { asset: SWAGGER_UI_SCRIPT }))}"></script>`,
      `<script src="${html(fileFor("docsScript"))}"></script>`,
    ],
    {
      head: [
        `<meta http-equiv="Content-Security-Policy" content="${html(CONTENT_SECURITY_POLICY)}">`,
        // No favicon request: the host would answer it with the JSON 404, an error in the console.
        '<link rel="icon" href="data:,">',
        `<link rel="stylesheet" href="${html(fileFor("swaggerUi", { asset: SWAGGER_UI_STYLE }))}">`,
      ],
      style: "body{margin:0}",
    },
  );
}

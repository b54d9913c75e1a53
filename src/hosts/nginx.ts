import type { PlaceholderValues } from "../core/plan.ts";
import {
  API_HEADERS,
  API_SERVED,
  errorBody,
  FILES,
  HIDDEN,
  FOLDER_INDEX,
  methodNotAllowed,
  NOT_FOUND_BODY,
  optionsBody,
  QUERY_PLACEHOLDERS,
  RULES,
  type Rule,
} from "../core/routes.ts";
import { PARSEABLE_VERSION } from "../core/version.ts";
import {
  dataPlaceholders,
  ESCAPED_UNRESERVED,
  hardwareAddressKeyOf,
  literalPatterns,
  overlong,
  overlongWarnings,
  OWN_KEY,
  regexEscape,
  severalFolds,
  valuePattern,
} from "./patterns.ts";
import { standaloneOf, type ConfigOptions, type Host, type Standalone } from "./host.ts";
import { UsageError } from "../core/problems.ts";

/**
 * nginx, generated from the route table with the rewrite module alone (`set`, `if`, `rewrite`,
 * `return`), so the whole configuration is one block for the operator's own `server {}` (no `map`,
 * which only the `http {}` level may hold).
 *
 * nginx cannot take "the first rule that matches" directly: `if` blocks do not nest and all of them
 * run. So every query parameter a rule names is first read into a state (`-` absent, `=<raw value>`,
 * the last occurrence as the preview takes it), the states and the decoded, slash-merged path are
 * joined into one string, and each rule becomes one regular expression over it. The rules are written
 * in reverse order: each match overwrites what the previous ones set, so the first rule of the table
 * that matches decides. nginx does not percent-decode query values, so a value reaches its file
 * directly only when its raw form is its own file-name key; the values of the data that are not (a
 * space, upper case, an alias) are matched by a pattern accepting every encoding of each byte, in an
 * internal location per placeholder that only requests using it reach.
 */

const PREFIX = `${HIDDEN}-nginx`;
const LOC = {
  file: `${PREFIX}/file`,
  key: `${PREFIX}/key/`,
  missing: `${PREFIX}/missing`,
  moved: `${PREFIX}/moved`,
  empty: `${PREFIX}/empty`,
  method: `${PREFIX}/method`,
  refused: `${PREFIX}/refused`,
} as const;

/** What nginx answers differently from the preview, whatever the data (docs/hosting.md, nginx). */
export const NGINX_LIMITS = {
  escapedUnreserved:
    "a query value with a percent-encoded letter, digit or one of - . _ ~: nginx cannot decode query values, and knows such a spelling only of the values it lists one by one (404 for the others, such as a hardware address of six hex pairs or a value that is its own file name)",
  malformed: "malformed percent-encoding: nginx answers its own 400 page for a path, and a query value as not found",
  caseFolding:
    "a hardware address whose letters fold only by Unicode's special rules (one letter to several, as ß to SS): nginx matches each letter in its lower- and upper-case form",
  paramNames: "a query parameter whose name is percent-encoded or repeated with different spellings: nginx matches names as they are sent",
  longValue:
    "a filter value whose pattern (every spelling of each of its bytes) would not fit in one parameter of nginx's configuration (4,096 bytes: about 500 characters, 200 for a hardware address): its rule is left out, and its requests are not found (404)",
} as const;

/** nginx reads a configuration's parameters into a 4,096-byte buffer (NGX_CONF_BUFFER): a longer one stops it loading. */
const NGINX_PARAMETER = 4096;
const fitsNginx = (pattern: string) => Buffer.byteLength(str(`^=${pattern}$`)) < NGINX_PARAMETER;

/** The values nginx's configuration leaves out, by parameter (their requests are not found). */
export const nginxOverlong = (values: PlaceholderValues) => overlong(values, fitsNginx);

export interface NginxOptions {
  /** a complete configuration running nginx alone in the foreground on 127.0.0.1, its files under `prefix` */
  readonly standalone?: Standalone & { readonly prefix?: string };
}

/** The nginx configuration for a build of these values (without them, the route table's rules alone). */
export function nginxConfig(values: PlaceholderValues | undefined, options: NginxOptions = {}): string {
  const rules = values?.rules ?? RULES;
  const server = serverBlock(rules, values);
  if (!options.standalone) return [...HEADER, "", ...server, ""].join("\n");
  const { root, port, prefix, user } = options.standalone;
  const at = (file: string) => (prefix ? `${prefix.replace(/\/$/, "")}/${file}` : file);
  return [
    ...HEADER,
    "# Standalone: runs nginx alone in the foreground, e.g. nginx -p <dir> -c <this file> -g 'daemon off;'",
    // Started as root, nginx's workers run as nobody, who may not read the build.
    ...(user ? [`user ${str(user.name)} ${str(user.group)};`] : []),
    "worker_processes 1;",
    `pid ${str(at("nginx.pid"))};`,
    `error_log ${str(at("error.log"))};`,
    "events { worker_connections 256; }",
    "http {",
    "  include /etc/nginx/mime.types;",
    "  access_log off;",
    ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((t) => `  ${t}_temp_path ${str(at(`tmp-${t}`))};`),
    "  server {",
    `    listen 127.0.0.1:${port};`,
    `    root ${str(root)};`,
    ...server.map((l) => `    ${l}`),
    "  }",
    "}",
    "",
  ].join("\n");
}

const HEADER = [
  "# Generated by `mesh-api host-config nginx` from the route table (src/core/routes.ts) and one dump's filter values.",
  "# Include it in the server {} that serves the build (its root is the build's folder); reload nginx after a new dump.",
];

/** What nginx cannot express for these values: a folding value (a MAC) with a letter whose case maps to several letters. */
export function nginxLimits(values: PlaceholderValues): { kind: string; message: string }[] {
  return [
    ...severalFolds(values).map((value) => ({ kind: "nginx", message: `${value}: ${NGINX_LIMITS.caseFolding}` })),
    ...overlongWarnings("nginx", values, fitsNginx, NGINX_LIMITS.longValue),
  ];
}

/** An nginx string: quoted, with its escapes; `$` only where a variable is meant. */
function str(s: string): string {
  return `"${s.replace(/[\\"]/g, "\\$&").replace(/\n/g, "\\n")}"`;
}

const apiHeaders = (indent = "") => [
  `${indent}types { }`,
  `${indent}default_type ${str(API_HEADERS["Content-Type"])};`,
  ...Object.entries(API_HEADERS)
    .filter(([name]) => name !== "Content-Type")
    .map(([name, value]) => `${indent}add_header ${name} ${str(value)} always;`),
];

const notFound = `return 404 ${str(NOT_FOUND_BODY)};`;

/** The build's files as a static host serves them: a location's body. */
const STATIC = [
  `  index ${FOLDER_INDEX};`,
  "  charset utf-8;",
  `  error_page 404 ${LOC.missing};`,
  `  error_page 403 =404 ${LOC.missing};`,
  `  error_page 301 =301 ${LOC.empty};`,
  `  error_page 405 =405 ${LOC.empty};`,
  // Other methods: refused for a file, but what is missing is not found and a folder moves to its slash first.
  '  set $mesh_path "$uri";',
  `  if ($request_method !~ ^(GET|HEAD)$) { rewrite ^ ${LOC.method} last; }`,
];
/** Inside a prefix location (an exact one can hold no other): host and hidden files are not content. */
const HIDDEN_FILES = `  location ~ "/[._]" { return 404; }`;

function serverBlock(rules: readonly Rule[], values: PlaceholderValues | undefined): string[] {
  const params = [...new Set(rules.flatMap((r) => Object.keys(r.query)))].sort();
  const api = apiLocation(rules, params);
  const data = [...new Set(rules.flatMap((r) => dataPlaceholders(r).map(([, name]) => name)))].sort();
  return [
    "absolute_redirect off;",
    `error_page 404 ${LOC.missing};`,
    `error_page 403 =404 ${LOC.missing};`,
    "",
    "# The API: every path under /api/, by the route table.",
    "location = /api {",
    ...api,
    "}",
    "location ^~ /api/ {",
    ...api,
    "}",
    "# The API reference's folder inside it: the site's files, as below.",
    `location = ${API_SERVED.except.slice(0, -1)} {`,
    ...STATIC,
    "}",
    `location ^~ ${API_SERVED.except} {`,
    ...STATIC,
    HIDDEN_FILES,
    "}",
    ...outside(rules),
    "",
    "# A rule's file: not found unless it exists; OPTIONS describes the route.",
    `location = ${LOC.file} {`,
    "  internal;",
    ...apiHeaders("  "),
    `  if (!-f $document_root$mesh_file) { ${notFound} }`,
    "  if ($request_method = OPTIONS) { return 200 $mesh_options; }",
    "  rewrite ^ $mesh_file break;",
    "}",
    "",
    ...data.flatMap((name) => keyLocation(name, values)),
    "# The JSON 404 and the empty body of a redirect, with the API's headers.",
    `location = ${LOC.missing} {`,
    "  internal;",
    ...apiHeaders("  "),
    `  ${notFound}`,
    "}",
    `location = ${LOC.moved} {`,
    "  internal;",
    ...apiHeaders("  ").filter((l) => !l.includes("default_type")),
    '  default_type "";',
    '  return 200 "";',
    "}",
    `location = ${LOC.empty} {`,
    "  internal;",
    "  types { }",
    '  default_type "";',
    '  return 200 "";',
    "}",
    "",
    "# Everything else: the build's files as a static host serves them; host and hidden files are not content.",
    "location / {",
    ...STATIC,
    HIDDEN_FILES,
    "}",
    `location = ${LOC.method} {`,
    "  internal;",
    `  error_page 404 ${LOC.missing};`,
    `  error_page 301 =301 ${LOC.empty};`,
    `  error_page 405 =405 ${LOC.empty};`,
    "  if (-f $document_root$mesh_path) { return 405; }",
    `  if (-f $document_root\${mesh_path}${FOLDER_INDEX}) { return 405; }`,
    `  if (-f $document_root$mesh_path/${FOLDER_INDEX}) { return 301 $mesh_path/$is_args$args; }`,
    "  return 404;",
    "}",
    `location = ${FILES.notFoundPage} {`,
    ...apiHeaders("  "),
    `  error_page 405 =405 ${LOC.refused};`,
    "  if ($request_method !~ ^(GET|HEAD)$) { return 405; }",
    "}",
    `location = ${LOC.refused} {`,
    "  internal;",
    ...apiHeaders("  "),
    '  return 200 "";',
    "}",
  ];
}

/** The route table's files outside /api/ (the output records'): an exact location each, routed by its own rules. */
function outside(rules: readonly Rule[]): string[] {
  return API_SERVED.files.flatMap((file) => {
    const own = rules.filter((r) => r.from === file);
    return [`location = ${file} {`, ...apiLocation(own, [...new Set(own.flatMap((r) => Object.keys(r.query)))].sort()), "}"];
  });
}

const stateVar = (param: string) => `$mesh_q_${param}`;

function apiLocation(rules: readonly Rule[], params: readonly string[]): string[] {
  const lines = [
    ...apiHeaders(),
    `error_page 301 =301 ${LOC.moved};`,
    `if ($request_method !~ ^(GET|HEAD|OPTIONS)$) { return 405 ${str(errorBody(methodNotAllowed("$request_method")))}; }`,
    ...["do", "need", "to", "rest", "value", "options", "file"].map((v) => `set $mesh_${v} "";`),
  ];
  for (const param of params) {
    lines.push(`set ${stateVar(param)} "-";`);
    // The last occurrence counts; a name without "=" is present with an empty value.
    lines.push(`if ($args ~ ${str(`^(?:.*&)?${regexEscape(param)}(?:=(?<mesh_v>[^&]*))?(?:&|$)`)}) { set ${stateVar(param)} "=$mesh_v"; }`);
  }
  lines.push(`set $mesh_r "${params.map(stateVar).join("&")}&$uri";`);
  // Reverse order: the last match written is the table's first.
  for (let at = rules.length - 1; at >= 0; at--) lines.push(...ruleLines(rules[at], params));
  lines.push(
    `if ($mesh_do = "") { ${notFound} }`,
    `if ($mesh_do = 404) { ${notFound} }`,
    "if ($mesh_do = 301) { return 301 $uri/$is_args$args; }",
    `if ($mesh_need) { rewrite ^ ${LOC.key}$mesh_need last; }`,
    'set $mesh_file "$mesh_to$mesh_rest";',
    `rewrite ^ ${LOC.file} last;`,
  );
  return lines.map((l) => `  ${l}`);
}

/** The `if` blocks of one rule, least specific first. */
function ruleLines(rule: Rule, params: readonly string[]): string[] {
  const list = rule.from.endsWith("/");
  const data = dataPlaceholders(rule);
  // Other query placeholders (status) reach a file only with a value that is its own key.
  const plain = Object.entries(rule.query).filter(([p, v]) => v.startsWith(":") && !data.some(([d]) => d === p));
  const query = (own: boolean) =>
    params
      .map((p) => {
        const want = rule.query[p];
        if (want === undefined) return "[^&]*";
        if (!want.startsWith(":")) return `=${valuePattern(want, false)}`;
        return own && plain.some(([q]) => q === p) && rule.to !== null ? `=(?<mesh_p_${want.slice(1)}>${OWN_KEY})` : "=[^&]*";
      })
      .join("&");
  const test = (own: boolean, slash: "" | "/" | "any") => `if ($mesh_r ~ ${str(`^${query(own)}&${pathPattern(rule.from, slash)}$`)})`;
  const set = (pairs: Record<string, string>) => Object.entries(pairs).map(([k, v]) => `set $mesh_${k} ${str(v)};`);
  if (rule.kind === "not-found" || rule.to === null) return [`${test(false, "any")} { ${set({ do: "404" }).join(" ")} }`];
  const out: string[] = [];
  if (list) out.push(`${test(false, "")} { ${set({ do: "301" }).join(" ")} }`);
  if (plain.length > 0) out.push(`${test(false, list ? "/" : "")} { ${set({ do: "404" }).join(" ")} }`);
  const target = rule.to.replace(/:([a-z]+)/g, (_, name: string) => (data.some(([, d]) => d === name) ? "\u0000" : `$mesh_p_${name}`));
  const [to, rest = ""] = target.split("\u0000");
  const [param, need] = data[0] ?? ["", ""];
  const sets = set({ do: "file", to, rest, need, options: optionsBody(rule.kind) });
  if (param) sets.push(`set $mesh_value ${stateVar(param)};`);
  out.push(`${test(true, list ? "/" : "")} { ${sets.join(" ")} }`);
  return out;
}

/** A rule's path as a pattern over the decoded path; `:name` segments are safe segments, captured. */
function pathPattern(from: string, slash: "" | "/" | "any"): string {
  if (from.endsWith("/*")) return `${regexEscape(from.slice(0, -2))}(?:/.*)?`;
  const body = from
    .replace(/\/$/, "")
    .split("/")
    .map((s) => (s.startsWith(":") ? `(?<mesh_p_${s.slice(1)}>[^/\\\\\\x00-\\x1f\\x7f]+)` : regexEscape(s)))
    .join("/");
  return body + (slash === "any" ? "/?" : slash);
}

/** The internal location turning a raw value of one data placeholder into its file's key. */
function keyLocation(name: string, values: PlaceholderValues | undefined): string[] {
  const spec = QUERY_PLACEHOLDERS[name];
  const lines = [
    `location = ${LOC.key}${name} {`,
    "  internal;",
    ...apiHeaders("  "),
    'set $mesh_key "";',
    `if ($mesh_value ~ ${str(`^=(?<mesh_own>${OWN_KEY})$`)}) { set $mesh_key $mesh_own; }`,
  ];
  const other = values?.others.get(name);
  if (other !== undefined && spec.other) {
    // The class of values with one answer, tested on the raw value: sure only without escapes of the characters a pattern can hold.
    lines.push(
      `set $mesh_raw_${name} "";`,
      `if ($mesh_value ~ ${str("^=(?<mesh_raw>.+)$")}) { set $mesh_raw_${name} $mesh_raw; }`,
      `if ($mesh_raw_${name} !~ ${str(PARSEABLE_VERSION.source)}) { set $mesh_key ${str(other)}; }`,
      `if ($mesh_value ~ ${str(ESCAPED_UNRESERVED)}) { set $mesh_key ""; }`,
    );
  }
  if (spec.fold === "lower") lines.push(...hardwareAddressKey());
  if (values)
    for (const [pattern, key] of literalPatterns(values, name, spec.fold === "lower" ? hardwareAddressKeyOf : undefined, fitsNginx))
      lines.push(`if ($mesh_value ~ ${str(`^=${pattern}$`)}) { set $mesh_key ${str(key)}; }`);
  lines.push(`if ($mesh_key = "") { ${notFound} }`, 'set $mesh_file "$mesh_to$mesh_key$mesh_rest";', `rewrite ^ ${LOC.file} last;`);
  return [...lines.map((l, i) => (i === 0 || l.startsWith("  ") ? l : `  ${l}`)), "}", ""];
}

/**
 * A hardware address written as six pairs of hex digits joined by ":" (raw or `%3A`), in any case, gets
 * its key computed here rather than listed: every interface of the network has one, and a pattern per
 * address would be tested on every such request (10,860 of them at 3,000 access points). The key is
 * the lower-case address with ":" as `_3A` (names.ts fileKey); nginx has no lower-case function at
 * the server level, so each of the twelve digits is lowered by its own tests (six letters each).
 */
function hardwareAddressKey(): string[] {
  const pair = (i: number) => `(?<mesh_h${i}>[0-9A-Fa-f]{2})`;
  const colon = "(?::|%3[Aa])";
  const lines = [
    'set $mesh_hex "";',
    `if ($mesh_value ~ ${str(`^=${[1, 2, 3, 4, 5, 6].map(pair).join(colon)}$`)}) { set $mesh_hex "${[1, 2, 3, 4, 5, 6].map((i) => `\${mesh_h${i}}`).join("")}"; }`,
  ];
  for (let at = 0; at < 12; at++)
    for (const letter of "ABCDEF")
      lines.push(
        `if ($mesh_hex ~ "^(?<mesh_a>.{${at}})${letter}(?<mesh_b>.*)$") { set $mesh_hex "\${mesh_a}${letter.toLowerCase()}\${mesh_b}"; }`,
      );
  const pairs = [1, 2, 3, 4, 5, 6].map((i) => `(?<mesh_l${i}>..)`).join("");
  lines.push(`if ($mesh_hex ~ "^${pairs}$") { set $mesh_key "${[1, 2, 3, 4, 5, 6].map((i) => `\${mesh_l${i}}`).join("_3A")}"; }`);
  return lines;
}

/**
 * nginx as a Host: nothing in the build (the 404 page is Netlify's file, which nginx does not read),
 * the block `host-config nginx --data <dump>` prints for the operator's server {}, or with
 * `--standalone --root <dir> --port <n>` a configuration running nginx alone (relative paths under its `-p` prefix).
 */
export const nginx: Host = {
  name: "nginx",
  server: true,
  files: () => [],
  config(input, options: ConfigOptions = {}) {
    const standalone = standaloneOf(options, "block for your server {}", true);
    return nginxConfig(input, standalone && { standalone });
  },
  limits: nginxLimits,
};

import type { PlaceholderValues } from "../core/plan.ts";
import { PARSEABLE_VERSION } from "../core/values/version.ts";
import * as compiled from "./compiled.ts";
import { SERVED } from "./served.ts";
import { serverHost, type Host, type Standalone } from "./host.ts";
import { overlong, OWN_KEY, PERCENT_UTF8, regexEscape, valuePattern } from "./patterns.ts";

/**
 * Apache httpd 2.4, generated from the route table as one block for the operator's own <VirtualHost>
 * (no RewriteMap, which only the server level may hold). mod_rewrite does the routing in the
 * server context, where a rule sees the decoded, slash-merged path: every query parameter a rule
 * names is read from the raw query into an environment variable (`-` absent, `=<raw value>`, the
 * last occurrence, its name in any spelling), beside its percent-decoded form (ap_expr's unescape());
 * each rule of the table is one RewriteRule whose conditions test those, and the first that matches
 * decides. A decoded value that is its own file-name key reaches its file directly; a value of the
 * data that is not (a space, upper case, an alias) is matched on the raw value by a pattern accepting
 * every encoding of each byte, in a section per placeholder that only requests using it enter.
 *
 * Apache has no directive for a response of our own making, so the answers that are not a file come
 * from its error machinery: the JSON 404 and 400 are ErrorDocument strings; the answer to OPTIONS is
 * `R=200` with an ErrorDocument 200 string naming the route; a redirect (mod_rewrite writes an
 * absolute Location, in a header table mod_headers cannot reach on an error) and a 405 (whose Allow
 * header Apache would add itself) are handed by ErrorDocument to an internal request, which serves
 * the build's 404 file rewritten by mod_substitute: emptied, or to the 405's body with the method
 * echoed by mod_include. There mod_headers can set every header.
 */

const PREFIX = `${SERVED.hidden}-apache`;
/** the internal request of a redirect and a 405 */
const ANSWER = `${PREFIX}/answer`;
/** What the internal request answers, set by the request it answers for (ANSWER_KIND). */
const ANSWER_KIND = { refused: "refused", typed: "typed", moved: "moved" } as const;

/** The modules the block uses beside the ones Debian enables by default (mime, dir). */
export const APACHE_MODULES = ["rewrite", "headers", "substitute", "include", "buffer"] as const;

/** What Apache answers differently from the preview, whatever the data (docs/hosting.md, Apache). */
export const APACHE_LIMITS = {
  redirectHexCase:
    "the Location of a redirect whose path holds a character percent-encoded with a hex letter (non-ASCII, or one of ;<=>?[]^{|}): mod_rewrite escapes in lower-case hex, the preview in upper case (the same URL)",
  encodedNul: "a path holding %00: Apache refuses it as not found before any module sees it (404), the preview as malformed (400)",
  encodedSlash:
    "a path holding %2F: Apache refuses it as not found (AllowEncodedSlashes Off, its default; decoding them would come after dot segments are removed), the preview decodes it",
  dotSegments: "a path holding . or .. segments: Apache resolves them first (RFC 3986), the preview does not (404, or 400 outside the API)",
  longTarget:
    "a request line longer than 8,190 bytes: Apache's own 414 page (LimitRequestLine, read before any configuration of the block applies)",
  assetType:
    "a file outside the API other than HTML: Apache types it by its own MIME table (/etc/mime.types), the preview as http-server does",
  caseFolding:
    "a hardware address whose letters fold only by Unicode's special rules (one letter to several, as ß to SS): Apache matches each letter in its lower- and upper-case form",
  longValue:
    "a filter value whose pattern (every spelling of each of its bytes) is longer than Apache's regular expressions compile (measured: 24,000 characters load, 32,000 do not; the build stops at 16,000, about 2,000 characters of a value, 800 of a hardware address): its rule is left out, and its requests are not found (404)",
} as const;

/** The longest pattern the block writes: PCRE2 as Debian builds it refuses to compile one of about 32,000 characters of these patterns. */
const APACHE_PATTERN = 16_000;
const fitsApache = (pattern: string) => pattern.length <= APACHE_PATTERN;

/** The values Apache's configuration leaves out, by parameter (their requests are not found). */
export const apacheOverlong = (values: PlaceholderValues) => overlong(values, fitsApache);

export interface ApacheOptions {
  /** a complete configuration running Apache alone in the foreground on 127.0.0.1, its files under `prefix` */
  readonly standalone?: Standalone & {
    /** the ServerRoot (pid file, error log, runtime files); without it, the one `apache2 -d` names */
    readonly prefix?: string;
  };
}

const MODULE_DIR = "/usr/lib/apache2/modules";

/** The Apache configuration for a build of these values (without them, the route table's rules alone). */
export function apacheConfig(values: PlaceholderValues | undefined, options: ApacheOptions = {}): string {
  const block = serverBlock(compiled.serverTable(values), values);
  if (!options.standalone) return [...HEADER, "", ...block, ""].join("\n");
  const { root, port, prefix, user } = options.standalone;
  const modules = ["mpm_event", "authz_core", "mime", ...APACHE_MODULES];
  return [
    ...HEADER,
    "# Standalone: runs Apache alone in the foreground, e.g. apache2 -X -d <folder for its files> -f <this file>",
    ...(prefix ? [`ServerRoot ${str(prefix)}`] : []),
    // Its mutexes and runtime files too (Mutex's default folder is this one).
    `DefaultRuntimeDir ${str(prefix ?? ".")}`,
    'PidFile "apache2.pid"',
    'ErrorLog "error.log"',
    "LogLevel warn",
    `Listen 127.0.0.1:${port}`,
    "ServerName 127.0.0.1",
    // Apache refuses to serve as root, and its default user may not read the build.
    ...(user ? [`User ${str(user.name)}`, `Group ${str(user.group)}`] : []),
    ...modules.map((m) => `LoadModule ${m}_module ${str(`${MODULE_DIR}/mod_${m}.so`)}`),
    'TypesConfig "/etc/mime.types"',
    `DocumentRoot ${str(root)}`,
    `<Directory ${str(root)}>`,
    "  Options None",
    "  AllowOverride None",
    "  Require all granted",
    "</Directory>",
    "",
    ...block,
    "",
  ].join("\n");
}

const HEADER = [
  "# Generated by `mesh-api host-config apache` from the route table (src/core/routes.ts) and one dump's filter values.",
  `# Include it in the <VirtualHost> that serves the build (its DocumentRoot is the build's folder), with a2enmod ${APACHE_MODULES.join(" ")};`,
  "# reload Apache after a new dump.",
];

/** A single-quoted argument of a core directive, read as it is written (ap_getword_conf). */
const word = (s: string) => `'${s.replace(/[\\']/g, "\\$&")}'`;
/** A quoted argument of a core directive (ap_getword_conf: a backslash escapes a backslash or the quote). */
const str = (s: string) => `"${s.replace(/[\\"]/g, "\\$&")}"`;

/**
 * A constant for an ErrorDocument or Header value, which Apache reads as a string expression (`%{`
 * and backslashes are its syntax): the API's constants hold none, and this says so if one ever does.
 */
function constant(s: string, expression?: string): string {
  if (/[\\'%$\n]/.test(expression === undefined ? s : s.replace(expression, "")))
    throw new Error(`cannot write ${JSON.stringify(s)} as an Apache string constant`);
  return `'${s}'`;
}

/**
 * A regular expression as one argument of RewriteRule or RewriteCond, which mod_rewrite splits at
 * whitespace and quotes without unescaping anything: those characters are written as PCRE escapes.
 */
function rx(pattern: string): string {
  return pattern.replace(/["'\s]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/** A literal part of an `E=` value: mod_rewrite expands `\`, `$` and `%`, and splits flags at `,` and whitespace. */
function envText(s: string): string {
  if (/[,\]]/.test(s)) throw new Error(`cannot write ${JSON.stringify(s)} in a mod_rewrite flag`);
  return s.replace(/[\\$%\s]/g, "\\$&");
}

const env = (name: string) => `%{ENV:${name}}`;
const rawVar = (param: string) => `MESH_R_${param}`;
const decodedVar = (param: string) => `MESH_D_${param}`;
const flags = (list: readonly string[]) => `[${list.join(",")}]`;
/**
 * Any request path under /api/ but the reference's folder (the site's files, left to the static
 * section), and the output records' files outside it, which answer as the API does (the block has
 * answered every one of them when its API section ends).
 */
const API_PATH = `^(?!${regexEscape(SERVED.api.except.slice(0, -1))}(?:/|$))(?:/api(?:/|$)|${SERVED.api.files.map((f) => `${regexEscape(f)}$`).join("|")})`;

/** The answer to OPTIONS, with the route's name where each route's answer has its own. */
const OPTIONS_NAME = "%{reqenv:MESH_NAME}";

function optionsTemplate(): string {
  const name = OPTIONS_NAME;
  const template = SERVED.options("api-root").replace(JSON.stringify(SERVED.names["api-root"]), `"${name}"`);
  for (const kind of Object.keys(SERVED.names) as (keyof typeof SERVED.names)[])
    if (template.replace(name, SERVED.names[kind]) !== SERVED.options(kind))
      throw new Error(`the answer to OPTIONS of ${kind} is not the template's`);
  return template;
}

/** The 405's body in mod_substitute's replacement syntax, the method echoed by mod_include. */
function refusedTemplate(): string {
  const [before, after] = SERVED.refused("\uE000").split("\uE000");
  const echo = '<!--#echo encoding="none" var="REDIRECT_REQUEST_METHOD" -->';
  // ap_pregsub reads a backslash as an escape and `&` as the match; `|` is the delimiter.
  const replacement = (s: string) => s.replace(/[\\&$|]/g, "\\$&");
  return `s|.+|${replacement(before)}${echo}${replacement(after)}|`;
}

function serverBlock(table: compiled.ServerTable, values: PlaceholderValues | undefined): string[] {
  const headerIf = `"expr=-n reqenv('MESH_API') || %{REQUEST_STATUS} =~ /^40[04]$/"`;
  const answerIs = (kind: string) => `reqenv('REDIRECT_MESH_ANSWER') == '${kind}'`;
  const headers = (indent: string, condition: string, withType: boolean) =>
    Object.entries(SERVED.headers)
      .filter(([name]) => withType || name !== "Content-Type")
      .map(([name, value]) => `${indent}Header always set ${name} ${constant(value)} ${condition}`);
  return [
    "RewriteEngine On",
    "<IfModule mod_dir.c>",
    "  DirectorySlash Off",
    "</IfModule>",
    `ErrorDocument 400 ${constant(SERVED.malformed)}`,
    `ErrorDocument 404 ${constant(SERVED.notFound)}`,
    `ErrorDocument 200 ${constant(optionsTemplate(), OPTIONS_NAME)}`,
    `ErrorDocument 301 ${ANSWER}`,
    `ErrorDocument 405 ${ANSWER}`,
    "# The API's headers: on its answers, the 404 page, and every JSON 404 and 400.",
    ...headers("", headerIf, true),
    "# A file with a gzip twin: its Vary names Accept-Encoding too (twinRules), in one header as the preview writes it.",
    `Header always set Vary ${constant(SERVED.twin.vary(SERVED.headers.Vary))} "expr=-n reqenv('MESH_API') && -n reqenv('MESH_TWIN')"`,
    `Header always set Vary ${constant(SERVED.twin.vary(undefined))} "expr=-z reqenv('MESH_API') && -n reqenv('MESH_TWIN')"`,
    `Header always set Content-Type ${constant("text/html; charset=utf-8")} env=MESH_HTML`,
    "# The site's files with a type of their own (staticSection notes each).",
    ...SERVED.typed.map(({ type }, i) => `Header always set Content-Type ${constant(type)} env=${typedVar(i)}`),
    "",
    "# The internal request answering a redirect or a 405: the build's 404 file, emptied or made the 405's body.",
    "RewriteCond %{ENV:REDIRECT_STATUS} ^(?:301|405)$",
    `RewriteRule ${rx(`^${regexEscape(ANSWER)}$`)} %{DOCUMENT_ROOT}${SERVED.files.notFound} [L]`,
    `<Location ${str(ANSWER)}>`,
    "  Options +Includes",
    "  SetOutputFilter SUBSTITUTE;INCLUDES;BUFFER",
    `  <If "${answerIs(ANSWER_KIND.refused)}">`,
    `    Substitute ${word(refusedTemplate())}`,
    "  </If>",
    "  <Else>",
    "    Substitute 's|.+||'",
    "  </Else>",
    `  <If "!(${answerIs(ANSWER_KIND.refused)} || ${answerIs(ANSWER_KIND.typed)})">`,
    "    RemoveType .json",
    "  </If>",
    // mod_rewrite's Location is absolute (scheme and host as the request named them); the preview's is the path.
    `  Header edit Location ${str("^[a-z][a-z0-9+.-]*://[^/]*")} ""`,
    ...headers("  ", `"expr=-n reqenv('REDIRECT_MESH_API')"`, false).map((l) => l.replace("Header always set", "Header set")),
    "</Location>",
    "",
    "# Malformed requests: a percent sign without two hex digits, or escapes that are not UTF-8 (the path's own are Apache's 400).",
    `RewriteCond %{THE_REQUEST} !${rx(`^\\S+ (?:[^%\\s]|${PERCENT_UTF8})*(?: |$)`)}`,
    "RewriteRule ^ - [R=400]",
    ...twinTypes(),
    "",
    ...apiSection(table, values),
    "",
    ...staticSection(),
  ];
}

function apiSection(table: compiled.ServerTable, values: PlaceholderValues | undefined): string[] {
  const { params } = table;
  const lines = [
    "# The API: every path under /api/ and the output records' files outside it, by the route table.",
    `RewriteRule ${API_PATH} - [E=MESH_API:1]`,
    "RewriteCond %{REQUEST_METHOD} !^(?:GET|HEAD|OPTIONS)$",
    `RewriteRule ${API_PATH} - [R=405,E=MESH_ANSWER:${ANSWER_KIND.refused}]`,
    "# Each parameter a rule names: its raw state (the last occurrence, the name in any spelling) and the state decoded.",
  ];
  for (const param of params) {
    const name = valuePattern(param, false);
    lines.push(
      `RewriteRule ${API_PATH} - [E=${rawVar(param)}:-,E=${decodedVar(param)}:!]`,
      `RewriteCond %{QUERY_STRING} ${rx(`^(?:.*&)?${name}(?:=([^&]*))?(?:&|$)`)}`,
      `RewriteRule ${API_PATH} - [E=${rawVar(param)}:=%1]`,
      `RewriteCond expr "unescape(reqenv('${rawVar(param)}')) =~ /^([\\s\\S]*)$/"`,
      `RewriteRule ${API_PATH} - [E=${decodedVar(param)}:%1]`,
    );
  }
  lines.push("# The route table, first match first: each rule notes what it answers.");
  for (const rule of table.rules) lines.push(...ruleLines(rule));
  lines.push(
    "# A list path without its slash moves to it, with the query as sent; a rule without a file is not found.",
    "RewriteCond %{ENV:MESH_LIST} =1",
    "RewriteCond %{ENV:MESH_SLASH} ^$",
    `RewriteRule ^(/api/.*)$ $1/ [R=301,L,B,BNP,BNE=-_.!~*'():/,NE,E=MESH_ANSWER:${ANSWER_KIND.moved}]`,
    "RewriteCond %{ENV:MESH_DO} !=file",
    `RewriteRule ${API_PATH} - [R=404]`,
    "# A data placeholder's value: its own key, the class of values with one answer, or the key of a value of the data.",
    ...table.data.flatMap((name) => keySection(name, values)),
    "RewriteCond %{ENV:MESH_NEED} !^$",
    "RewriteCond %{ENV:MESH_KEY} ^$",
    `RewriteRule ${API_PATH} - [R=404]`,
    ...(table.split
      ? [
          "# A key in a folder the build splits lies in its shard: the mark and the key's last two characters.",
          `RewriteCond ${env("MESH_SPLIT")}|${env("MESH_PKEY")}${env("MESH_KEY")} ${rx(compiled.shardPattern(APACHE))}`,
          `RewriteRule ${API_PATH} - [E=MESH_SHARD:${envText(compiled.SHARD_MARK)}%1/]`,
        ]
      : []),
    `RewriteRule ${API_PATH} - [E=MESH_FILE:${env("MESH_TO")}${table.split ? `${env("MESH_SHARD")}${env("MESH_PKEY")}` : ""}${env("MESH_KEY")}${env("MESH_REST")}]`,
    `RewriteCond %{DOCUMENT_ROOT}${env("MESH_FILE")} !-f`,
    `RewriteRule ${API_PATH} - [R=404]`,
    "RewriteCond %{REQUEST_METHOD} =OPTIONS",
    `RewriteRule ${API_PATH} - [R=200]`,
    ...twinRules(API_PATH, env("MESH_FILE")),
    `RewriteRule ${API_PATH} %{DOCUMENT_ROOT}${env("MESH_FILE")} [L]`,
  );
  return lines;
}

/** Apache's dialect of the compiled form: numbered groups, the path decoded and its slashes merged, values tested decoded. */
const APACHE: compiled.Dialect = { group: (_, body) => `(${body})`, slash: "/", literal: regexEscape };

/** One rule of the table: its conditions, and what it notes when it is the first to match. */
function ruleLines(rule: compiled.ServerRule): string[] {
  const from = rule.rule.from;
  const segments = from.split("/").filter((s) => s.startsWith(":")).length;
  const pattern = rx(`^${compiled.pathPattern(from, rule.list ? "captured" : "", APACHE)}$`);
  const first = "RewriteCond %{ENV:MESH_DO} ^$";
  const conditions: string[] = [];
  // A query placeholder that is not the data's (status) reaches a file only with a value that is its own key.
  let plain: string | undefined;
  for (const [param, test] of rule.query) {
    if (test.is === "literal") conditions.push(`RewriteCond ${env(decodedVar(param))} ${rx(`^=${APACHE.literal(test.value)}$`)}`);
    else if (test.is === "own") plain = param;
    else conditions.push(`RewriteCond ${env(rawVar(param))} ^=`);
  }
  // A list path notes whether it has its slash: without it, the answer is a redirect whatever the file.
  const moves = rule.list && !rule.closed ? { LIST: "1", SLASH: `$${segments + 1}` } : {};
  const rewrite = (pairs: Record<string, string>) => {
    const set = Object.entries({ ...pairs, ...moves }).filter(([, v]) => v !== "");
    return `RewriteRule ${pattern} - ${flags(set.map(([k, v]) => `E=MESH_${k}:${v}`))}`;
  };
  if (rule.closed) return [first, ...conditions, rewrite({ DO: "404" })];
  // The target: path placeholders from the path, the plain one from its capture, the data's one decided later.
  const captured = (p: { path: string; index: number } | { query: string }) => ("path" in p ? `$${p.index + 1}` : "%1");
  const print = (parts: readonly compiled.TargetPart[]) =>
    compiled.printTarget(
      parts.map((p) => ("text" in p ? { text: envText(p.text) } : p)),
      captured,
    );
  const param = rule.data?.param;
  const file = {
    DO: "file",
    TO: print(rule.to),
    REST: print(rule.rest),
    NEED: rule.data?.name ?? "",
    VALUE: param ? env(rawVar(param)) : "",
    DVALUE: param ? env(decodedVar(param)) : "",
    NAME: envText(SERVED.names[rule.kind]),
    PKEY: rule.key ? print([rule.key]) : "",
    SPLIT: rule.split ? "1" : "",
  };
  if (!plain) return [first, ...conditions, rewrite(file)];
  return [
    first,
    ...conditions,
    `RewriteCond ${env(decodedVar(plain))} ${rx(`^=(${OWN_KEY})$`)}`,
    rewrite(file),
    first,
    ...conditions,
    `RewriteCond ${env(rawVar(plain))} ^=`,
    rewrite({ DO: "404" }),
  ];
}

/** The rules turning the value of one data placeholder into its file's key; requests for other placeholders skip them. */
function keySection(name: string, values: PlaceholderValues | undefined): string[] {
  const key = compiled.keyLookup(name, values, { lowers: true, fits: fitsApache });
  const rules: string[][] = [[`RewriteCond ${env("MESH_DVALUE")} ${rx(`^=(${OWN_KEY})$`)}`, `RewriteRule ^ - [E=MESH_KEY:%1]`]];
  // An ordered value's class (firmware bounds), on the decoded value: the last rule that sets the key wins, so last to first.
  for (const c of [...key.ordered].reverse())
    rules.push([`RewriteCond ${env("MESH_DVALUE")} ${rx(`^=${c.pattern}$`)}`, `RewriteRule ^ - [E=MESH_KEY:${envText(c.key)}]`]);
  if (key.other !== undefined) {
    // The class of values with one answer: the decoded value is not a version (a %00 empties it, and no version is empty).
    rules.push(
      [`RewriteCond ${env("MESH_DVALUE")} ^=([\\s\\S]*)$`, "RewriteRule ^ - [E=MESH_BARE:%1]"],
      [`RewriteCond ${env("MESH_BARE")} !${rx(PARSEABLE_VERSION.source)}`, `RewriteRule ^ - [E=MESH_KEY:${envText(key.other)}]`],
    );
  }
  if (key.hardware) {
    // A hardware address of six hex pairs, decoded, in any case: its key computed (lower case, ":" as
    // _3A: hosts/patterns.ts hardwareAddressKeyOf) instead of one pattern per interface tested on every such request.
    const pairs = Array.from({ length: 6 }, () => "([0-9a-f]{2})").join(":");
    rules.push([
      `RewriteCond expr "tolower(reqenv('MESH_DVALUE')) =~ /^=${pairs}$/"`,
      `RewriteRule ^ - [E=MESH_KEY:${Array.from({ length: 6 }, (_, i) => `%${i + 1}`).join("_3A")}]`,
    ]);
  }
  for (const [pattern, file] of key.literals)
    rules.push([`RewriteCond ${env("MESH_VALUE")} ${rx(`^=${pattern}$`)}`, `RewriteRule ^ - [E=MESH_KEY:${envText(file)}]`]);
  return [`RewriteCond ${env("MESH_NEED")} !=${name}`, `RewriteRule ^ - [S=${rules.length}]`, ...rules.flat()];
}

/** The variable noting a request for the site's i-th typed file (SERVED.typed). */
const typedVar = (i: number) => `MESH_TYPED_${i}`;

function staticSection(): string[] {
  const notFoundPage = rx(`^${regexEscape(SERVED.files.notFoundPage)}$`);
  return [
    "# Everything else: the build's files as a static host serves them; host and hidden files are not content.",
    "RewriteRule (?:^|/)[._] - [R=404]",
    "# A folder moves to its slash when it has a page, whatever the method.",
    "RewriteCond %{DOCUMENT_ROOT}$1 -d",
    `RewriteCond %{DOCUMENT_ROOT}$1/${SERVED.folderIndex} -f`,
    "RewriteRule ^(/.*[^/])$ $1/ [R=301,L,B,BNP,BNE=-_.!~*'()/,NE]",
    `RewriteRule ^(.*/)$ $1${SERVED.folderIndex}`,
    "RewriteCond %{DOCUMENT_ROOT}$1 !-f",
    "RewriteRule ^(.*)$ - [R=404]",
    `RewriteRule ${notFoundPage} - [E=MESH_API:1,E=MESH_ANSWER:${ANSWER_KIND.typed}]`,
    "RewriteCond %{REQUEST_METHOD} !^(?:GET|HEAD)$",
    "RewriteRule ^ - [R=405]",
    `RewriteCond $1 !${notFoundPage}`,
    "RewriteRule ^(.*\\.html?)$ - [NC,E=MESH_HTML:1]",
    ...SERVED.typed.map(({ file }, i) => `RewriteRule ${rx(`^${regexEscape(file)}$`)} - [E=${typedVar(i)}:1]`),
    ...twinRules("^(.*)$", "$1"),
    "RewriteRule ^(.*)$ %{DOCUMENT_ROOT}$1 [L]",
  ];
}

/**
 * Accept-Encoding naming gzip (or x-gzip) without a weight of 0: nginx's test, which the other
 * servers share for a named gzip (RFC 9110 12.5.3; `*` alone is not read here).
 */
const ACCEPTS_GZIP = String.raw`(?:^|,)\s*(?:x-)?gzip\s*(?:,|$|;(?!\s*q\s*=\s*0(?:\.0*)?\s*(?:[,;]|$)))`;

/**
 * A file with a gzip twin (core/routes/compression.ts): every answer of it says it varies with
 * Accept-Encoding (after the API's Vary, set first), and a client that accepts gzip is sent the
 * twin, which mod_mime then types by the file's own name and marks with Content-Encoding (twinTypes);
 * no-gzip keeps mod_deflate from compressing it again. `file` is the file's path as the rule's
 * substitution names it (a back-reference of `match`, or an environment variable).
 */
function twinRules(match: string, file: string): string[] {
  const twin = `%{DOCUMENT_ROOT}${file}${SERVED.twin.suffix}`;
  return [
    `RewriteCond ${twin} -f`,
    `RewriteRule ${match} - [E=MESH_TWIN:1]`,
    "RewriteCond %{ENV:MESH_TWIN} =1",
    `RewriteCond %{HTTP:Accept-Encoding} ${rx(ACCEPTS_GZIP)} [NC]`,
    `RewriteRule ${match} ${twin} [L,E=no-gzip:1]`,
  ];
}

/** A twin is typed by the name of its file and sent with Content-Encoding; an archive (.tar.gz) stays what it is. */
function twinTypes(): string[] {
  return [
    `<FilesMatch ${str(SERVED.twin.name)}>`,
    `  RemoveType ${SERVED.twin.suffix}`,
    `  AddEncoding ${SERVED.twin.encoding} ${SERVED.twin.suffix}`,
    "</FilesMatch>",
  ];
}

/**
 * Apache as a Host: nothing in the build (the block reads the 404 file every build has), the block
 * `host-config apache --data <dump>` prints for the operator's <VirtualHost>, or with
 * `--standalone --root <dir> --port <n>` a configuration running Apache alone (its files under `apache2 -d`).
 */
export const apache: Host = serverHost(
  {
    name: "apache",
    block: "block for your <VirtualHost>",
    changesUser: true,
    limits: APACHE_LIMITS,
    fits: fitsApache,
    // The package's postinst starts the apache2 service on port 80 with `|| true`: where that port is taken
    // (nginx's own service), scripts/test-deps.mjs's install still succeeds.
    test: { file: "apache", tier: "servers", program: { path: "/usr/sbin/apache2", env: "MESH_API_APACHE", debian: "apache2" } },
  },
  (values, standalone) => apacheConfig(values, standalone && { standalone }),
);

/** What Apache cannot express for these values: a MAC whose case folds to several letters, a value too long for it. */
export const apacheLimits = apache.limits;

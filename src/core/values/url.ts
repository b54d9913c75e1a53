import { CommandError } from "../problems.ts";
/**
 * The http(s) addresses commands are given (check's site, import api's API, fetch-dump's archive):
 * one rule and one wording for all of them, so a mistyped address gets the same kind of sentence, and
 * the same exit code, from every command.
 */

/** What a command needs an address for, in the words of its messages. */
export interface UrlNeed {
  /** the command as the user typed it: "check", "import api" */
  readonly command: string;
  /** what it needs, and in which form: "the site's address as http(s)://host[:port]" */
  readonly needs: string;
  /** shown when the given text suggests no better example */
  readonly example: string;
  /** the address in a message that does not repeat it (it may hold a password): "the base URL" */
  readonly name: string;
}

/** An address a command cannot use: one sentence saying what is wrong and the form expected. The CLI exits 2. */
export class UrlError extends CommandError {
  readonly ending = "usage";
  constructor(message: string) {
    super(message);
    this.name = "UrlError";
  }
}

/** `<what>; <command> needs <needs>, e.g. <example>`: the one form of every message about an address. */
export function urlError(need: UrlNeed, what: string, example = need.example): UrlError {
  return new UrlError(`${what}; ${need.command} needs ${need.needs}, e.g. ${example}`);
}

/**
 * `text`, trimmed, as an http(s) URL with a host and without user info (fetch refuses to send it);
 * anything else throws UrlError. `exampleOf` turns the URL a mistyped text probably meant (with a
 * scheme, or the other one) into the example the message shows; undefined shows the need's own.
 */
export function httpUrl(text: string, need: UrlNeed, exampleOf: (url: URL) => string | undefined = (url) => url.href): URL {
  const given = text.trim();
  const fail = (what: string, example?: string): never => {
    throw urlError(need, what, example);
  };
  if (given === "") fail(`${need.name} is empty`);
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(.*)$/s.exec(given);
  if (!m) {
    if (/^https?:/i.test(given))
      fail(
        `${given} has no // after the scheme`,
        given.replace(/^(https?):\/*/i, (_, s: string) => `${s.toLowerCase()}://`),
      );
    let example: string | undefined;
    try {
      example = exampleOf(httpUrl(`https://${given}`, need, exampleOf));
    } catch {
      // no better example than the need's own
    }
    fail(`${given} has no scheme`, example);
  }
  const scheme = m![1].toLowerCase();
  const authority = m![2].split(/[/?#\\]/)[0];
  const hostOnly = authority.slice(authority.lastIndexOf("@") + 1);
  const example = (s = scheme) => (hostOnly && !/\s/.test(hostOnly) ? `${s}://${hostOnly}` : undefined);
  if (scheme !== "http" && scheme !== "https") fail(`${given} uses ${scheme}:, which ${need.command} cannot request`, example("https"));
  // Not echoed: user info may hold a password.
  if (authority.includes("@")) fail(`${need.name} has user info (name@ before the host), which ${need.command} does not send`, example());
  if (authority === "") fail(`${given} has no host`);
  try {
    return new URL(given);
  } catch {
    const port = /:(\d+)$/.exec(authority)?.[1];
    if (port !== undefined && Number(port) > 65535) fail(`${given} has the port ${port}, and ports end at 65535`);
    const ipv6 = !authority.startsWith("[") && (authority.match(/:/g)?.length ?? 0) > 1;
    return fail(`${given} is not a valid URL${ipv6 ? " (an IPv6 address goes in brackets, like http://[::1]:8080)" : ""}`);
  }
}

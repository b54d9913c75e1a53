import { dayOf } from "../../src/core/history/daily.ts";
import { beforeValues } from "../../src/core/filters/bounds.ts";
import { placeholderValues } from "../../src/core/plan.ts";
import { isOwnKey } from "../../src/core/values/names.ts";
import { STATUSES, type Model } from "../../src/core/model/model.ts";
import { RULES, type Rule } from "../../src/core/routes.ts";

/**
 * Requests that exercise every rule of the route table on a given network: each placeholder filled
 * with values present in the data (including those that need literal host rules), with unknown
 * values, and with `format=api`. The tests replay them against the preview, Netlify's engine and the
 * self-hosted servers (served.ts). The live check (`check`) does not use them: it samples the requests
 * of a build's own files (src/publish/deployment.ts requestsFromTree).
 */
export interface TableRequest {
  readonly rule: Rule;
  /** request target as sent: path and query, percent-encoded */
  readonly target: string;
}

const UNKNOWN_IP = "192.0.2.1";

export function tableRequests(model: Model, perPlaceholder = 4): TableRequest[] {
  const { values, aliases } = placeholderValues(model);
  const some = <T>(items: readonly T[]) => items.slice(0, perPlaceholder);
  // Values that a host can only reach through literal rules come first, so they are always sampled.
  const dataFirst = (items: readonly string[]) => some([...items.filter((v) => !isOwnKey(v)), ...items.filter(isOwnKey)]);
  const apIps = [
    ...some(model.accesspoints.map((a) => a.main_ip)),
    ...some(model.accesspoints.flatMap((a) => (a.main_ipv6 ? [a.main_ipv6] : []))),
  ];
  const addresses = [...model.interfaceByAddress.keys()];
  const ifaceIps = [...some(addresses.filter((a) => !a.includes(":"))), ...some(addresses.filter((a) => a.includes(":")))];
  const pathValues: Record<string, readonly string[]> = {
    key: [...some(model.links.map((l) => String(l.id))), ...some([...model.linkByPeers.keys()]), "999999", `${UNKNOWN_IP}-${UNKNOWN_IP}`],
    id: [...some(model.sites.map((s) => String(s.id))), "999999"],
    // the history by day: the build's own day (its first run), a day it has not, and no day at all
    day: [...(model.takenAt ? [dayOf(model.takenAt.text)] : []), "2000-01-01", "yesterday"],
  };
  const queryValues: Record<string, readonly string[]> = {
    status: [...STATUSES, "bogus"],
    version: [...dataFirst(values.version), "0.5.1-1", "garbage"],
    bound: [...some([...(aliases.get("bound")?.keys() ?? [])]), ...dataFirst(values.bound), ...some(beforeValues(["0.5.1-1"])), "garbage"],
    after: [...some([...(aliases.get("after")?.keys() ?? [])]), ...dataFirst(values.after), ...some(beforeValues(["0.5.1-1"])), "garbage"],
    ssid: [...dataFirst(values.ssid), "no such ssid"],
    mac: [...dataFirst(values.mac).flatMap((m) => [m, m.toUpperCase()]), "00:00:00:00:00:00"],
    a: ["x"],
    b: ["y"],
  };
  const out: TableRequest[] = [];
  for (const rule of RULES) {
    if (rule.kind === "not-found") {
      for (const t of ["/api/v2/", "/api/v1/nothing/", "/api/", "/api/v1/accesspoint/1.2.3.4/nothing/"]) out.push({ rule, target: t });
      continue;
    }
    const ipValues = rule.kind.startsWith("interface") ? ifaceIps : apIps;
    const paths = expand(rule.from, (name) => (name === "ip" ? [...ipValues, UNKNOWN_IP] : pathValues[name]));
    const queries = expandQuery(rule.query, queryValues);
    for (const path of paths) {
      for (const query of queries) {
        out.push({ rule, target: query ? `${path}?${query}` : path });
        out.push({ rule, target: `${path}?${query ? query + "&" : ""}format=api` });
      }
      // The other slash form: lists redirect to their slash, details with a slash are not found.
      const other = path.endsWith("/") ? path.slice(0, -1) : `${path}/`;
      out.push({ rule, target: queries[0] ? `${other}?${queries[0]}` : other });
    }
  }
  return out;
}

function expand(pattern: string, valuesOf: (name: string) => readonly string[]): string[] {
  let results = [""];
  for (const [i, segment] of pattern.split("/").entries()) {
    const options = segment.startsWith(":") ? valuesOf(segment.slice(1)) : [segment];
    results = results.flatMap((r) => options.map((o) => (i === 0 ? o : `${r}/${o}`)));
  }
  return results;
}

function expandQuery(query: Readonly<Record<string, string>>, values: Record<string, readonly string[]>): string[] {
  let results = [""];
  for (const [name, want] of Object.entries(query)) {
    const options = want.startsWith(":") ? values[want.slice(1)] : [want];
    results = results.flatMap((r) => options.map((v) => `${r ? r + "&" : ""}${name}=${encodeURIComponent(v)}`));
  }
  return results;
}

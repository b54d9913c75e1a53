import type { LoadedDump } from "../../src/io/read/load.ts";
import { buildModel, type Model } from "../../src/core/model/model.ts";
import { validateDump, type Validation } from "../../src/core/model/validator.ts";
import { outputFiles } from "../../src/core/plan.ts";
import { fileFor, parseRequest, parseRouting, resolve } from "../../src/core/routes.ts";
import { bodyPieces } from "../../src/core/body.ts";

/** In-memory dumps for rule tests: records as they would come out of the files. */
export function loaded(aps: unknown[], links: unknown[] = [], network?: unknown): LoadedDump {
  return {
    network: network === undefined ? undefined : { source: { file: "network.json" }, value: network },
    records: [
      ...aps.map((value, index) => ({ kind: "accesspoint" as const, source: { file: "accesspoints/a.json", index }, value })),
      ...links.map((value, index) => ({ kind: "link" as const, source: { file: "links/l.json", index }, value })),
    ],
    files: ["accesspoints/a.json", "links/l.json"],
    problems: [],
  };
}

export function validated(aps: unknown[], links: unknown[] = [], network?: unknown): Validation {
  return validateDump(loaded(aps, links, network));
}

export function model(aps: unknown[], links: unknown[] = [], network?: unknown): Model {
  const v = validated(aps, links, network);
  if (!v.dump) throw new Error(`invalid test dump: ${JSON.stringify(v.problems)}`);
  return buildModel(v.dump);
}

let nextId = 1000;
/** An access point with one wired interface holding its main_ip. */
export function ap(main_ip: string, extra: Record<string, unknown> = {}, interfaces?: unknown[]): Record<string, unknown> {
  const id = nextId++;
  return { main_ip, interfaces: interfaces ?? [{ id, addresses: [{ id, address: main_ip, netmask_prefixlen: 16 }] }], ...extra };
}

export const at = (lon: number, lat: number) => ({ type: "Point", coordinates: [lon, lat] });

/**
 * The response of every request target of a model, through the route table and the files the plan
 * yields, as a host serves them: a file's body, or `undefined` for a 404 (no rule, a refusing rule, or
 * a missing file). Redirects of list paths without their slash are not followed.
 */
export function answers(m: Model): (target: string) => string | undefined {
  const files = new Map([...outputFiles(m)].map((f) => [f.path, Buffer.concat([...bodyPieces(f.body)]).toString("utf8")]));
  const routing = parseRouting(files.get(fileFor("aliases")));
  return (target) => {
    const req = parseRequest(target);
    const r = req && resolve(req, routing);
    return r?.type === "file" ? files.get(r.file) : undefined;
  };
}

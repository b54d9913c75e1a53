import { UsageError } from "../core/problems.ts";
import type { Host } from "./host.ts";
import { apache } from "./apache.ts";
import { netlify } from "./netlify.ts";
import { netlifyEdge } from "./netlify-edge.ts";
import { nginx } from "./nginx.ts";
import { caddy } from "./caddy.ts";

/** Every host this tool configures, in the order their warnings and advice are printed. */
export const HOSTS: readonly Host[] = [netlify, netlifyEdge, apache, nginx, caddy];

export const HOST_NAMES: readonly string[] = HOSTS.map((h) => h.name);

/** The hosts that are web servers of the operator's (Host.server): what a cycle can keep configured. */
export const SERVER_NAMES: readonly string[] = HOSTS.filter((h) => h.server).map((h) => h.name);

/** The host of that name; a name no host has is a usage error that lists the hosts there are. */
export function hostNamed(name: string): Host {
  const host = HOSTS.find((h) => h.name === name);
  if (!host) throw new UsageError(`no host is named ${JSON.stringify(name)}; the hosts available are ${HOST_NAMES.join(", ")}`);
  return host;
}

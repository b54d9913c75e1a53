import type { TextPieces } from "../body.ts";
import { statusOf, STATUSES, type CycleHealth, type Model } from "../model/model.ts";
import { compareCodePoints } from "../values/text.ts";
import { parseInstant } from "../values/timestamp.ts";
import type { ResolvedLink } from "../model/validator.ts";

/**
 * `/metrics` (issue 42): the network's state in the Prometheus text exposition format 0.0.4, for a
 * Prometheus that scrapes the static site (docs/metrics.md). Pure and deterministic: the same model
 * and health give the same bytes. Every value is the data's: times are measured from the data's
 * instant (`taken_at`) and the cycle's record, never from the clock; a value the model lacks is
 * left out, never made up, and a family without a sample is left out whole.
 *
 * The format (prometheus.io/docs/instrumenting/exposition_formats): a `# HELP` and a `# TYPE` line
 * per family, then its samples, one a line, `name{label="value",…} value`; a label value escapes
 * backslash, double quote and line feed (`\\`, `\"`, `\n`), a HELP text backslash and line feed.
 * Label values come from routers (firmware versions): untrusted, always escaped.
 */

/** What `mesh-api cycle` tells the build about itself (live/run.ts); a plain build has none. */
export type { CycleHealth } from "../model/model.ts";

type Labels = readonly (readonly [name: string, value: string])[];
type Sample = readonly [labels: Labels, value: number];

/** A label value as the format quotes it. */
export const escapeLabelValue = (v: string): string => v.replace(/[\\"\n]/g, (c) => (c === "\n" ? "\\n" : `\\${c}`));

/** A HELP text as the format writes it. */
export const escapeHelp = (v: string): string => v.replace(/[\\\n]/g, (c) => (c === "\n" ? "\\n" : "\\\\"));

/** A sample value as Go's ParseFloat reads it (Prometheus's parser): the shortest round-trip decimal, or the special values. */
export function formatValue(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (n === Infinity) return "+Inf";
  if (n === -Infinity) return "-Inf";
  return String(n);
}

function sampleLine(name: string, labels: Labels, value: number): string {
  const set = labels.length === 0 ? "" : `{${labels.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(",")}}`;
  return `${name}${set} ${formatValue(value)}\n`;
}

/** A family's lines: HELP and TYPE, then its samples; nothing when it has none. */
function* family(name: string, type: "gauge" | "counter", help: string, samples: Iterable<Sample>): Generator<string> {
  let first = true;
  for (const [labels, value] of samples) {
    if (first) yield `# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} ${type}\n`;
    first = false;
    yield sampleLine(name, labels, value);
  }
}

const SECOND = 1_000_000;

/** Each access point's value of one field, where it has one, labelled by its main_ip. */
function* perAccesspoint(model: Model, value: (ap: Model["accesspoints"][number]) => number | null): Generator<Sample> {
  for (const ap of model.accesspoints) {
    const v = value(ap);
    if (v !== null) yield [[["main_ip", ap.main_ip]], v];
  }
}

/** The quality the API gives a link: its endpoints' qualities multiplied in dump order (resources.ts linkFacts). */
const linkQuality = (link: ResolvedLink): number => link.endpoints.reduce((q, e) => q * e.quality, 1);

/** The metrics file's text, in pieces (a line each: the per-item families grow with the network). */
export function metricsBody(model: Model, health?: CycleHealth): TextPieces {
  return { text: metricLines(model, health) };
}

function* metricLines(model: Model, health: CycleHealth | undefined): Generator<string> {
  const at = model.takenAt;
  yield* family(
    "mesh_data_timestamp_seconds",
    "gauge",
    "The instant of the data (taken_at), in seconds since the Unix epoch.",
    at === null ? [] : [[[], at.micros / SECOND]],
  );
  yield* countFamilies(model);
  yield* accesspointFamilies(model);
  yield* linkFamilies(model);
  if (health !== undefined) yield* cycleFamilies(health);
}

/** How many of each, by the key `of` gives. */
function tally<T>(items: readonly T[], of: (item: T) => string): Map<string, number> {
  const n = new Map<string, number>();
  for (const item of items) n.set(of(item), (n.get(of(item)) ?? 0) + 1);
  return n;
}

/** The counts: by status (the API's rule at the data's instant) and by firmware version. */
function* countFamilies(model: Model): Generator<string> {
  const apCounts = tally(model.accesspoints, (ap) => statusOf(ap.lastseen_timestamp, model.takenAt));
  const linkCounts = tally(model.links, (l) => statusOf(l.timestamp, model.takenAt));
  yield* family(
    "mesh_accesspoints",
    "gauge",
    "Access points by status at the data's instant (online: seen less than 30 minutes before, flapping: up to 30 days, offline: older or never).",
    STATUSES.map((s): Sample => [[["status", s]], apCounts.get(s) ?? 0]),
  );
  yield* family(
    "mesh_links",
    "gauge",
    "Links by status at the data's instant (the access points' rule, on the link's timestamp).",
    STATUSES.map((s): Sample => [[["status", s]], linkCounts.get(s) ?? 0]),
  );
  const versions = tally(model.accesspoints, (ap) => ap.mesh_version ?? "");
  yield* family(
    "mesh_accesspoints_by_version",
    "gauge",
    'Access points by firmware version (mesh_version); "" (no label in Prometheus) for those without one.',
    [...versions].sort(([a], [b]) => compareCodePoints(a, b)).map(([version, n]): Sample => [[["mesh_version", version]], n]),
  );
}

/** Each access point, by main_ip. */
function* accesspointFamilies(model: Model): Generator<string> {
  const at = model.takenAt;
  yield* family(
    "mesh_accesspoint_status",
    "gauge",
    "1 for the access point's status at the data's instant, 0 for the other two.",
    (function* (): Generator<Sample> {
      for (const ap of model.accesspoints) {
        const status = statusOf(ap.lastseen_timestamp, at);
        for (const s of STATUSES)
          yield [
            [
              ["main_ip", ap.main_ip],
              ["status", s],
            ],
            s === status ? 1 : 0,
          ];
      }
    })(),
  );
  yield* family(
    "mesh_accesspoint_last_seen_age_seconds",
    "gauge",
    "Seconds from the access point's last sighting (lastseen_timestamp) to the data's instant; absent for one never seen.",
    perAccesspoint(model, (ap) =>
      at === null || ap.lastseen_timestamp === null ? null : (at.micros - ap.lastseen_timestamp.micros) / SECOND,
    ),
  );
  for (const [name, help, value] of REPORTED) yield* family(name, "gauge", help, perAccesspoint(model, value));
}

/** What an access point last reported, as a family each: name, HELP, value. */
const REPORTED: readonly (readonly [string, string, (ap: Model["accesspoints"][number]) => number | null])[] = [
  ["mesh_accesspoint_system_uptime_seconds", "The access point's uptime (system_uptime) as it last reported it.", (ap) => ap.system_uptime],
  [
    "mesh_accesspoint_system_load_1min",
    "The access point's load average over one minute (system_load_1min) as it last reported it.",
    (ap) => ap.system_load_1min,
  ],
  [
    "mesh_accesspoint_device_memory_available",
    "The access point's memory (device_memory_available) as it last reported it, in the firmware's unit (the API does not state it; Opennet's values read as kilobytes).",
    (ap) => ap.device_memory_available,
  ],
  [
    "mesh_accesspoint_device_memory_free",
    "The access point's free memory (device_memory_free) as it last reported it, in the firmware's unit (the API does not state it; Opennet's values read as kilobytes).",
    (ap) => ap.device_memory_free,
  ],
];

/** Each link, by id, with its ends' access points in the link's endpoint order. */
function* linkFamilies(model: Model): Generator<string> {
  yield* family(
    "mesh_link_quality",
    "gauge",
    "The link's quality as the API gives it (its endpoints' qualities multiplied), 0 to 1.",
    (function* (): Generator<Sample> {
      for (const link of model.links) {
        const ends = link.endpoints.map((e) => model.interfaceById.get(e.interfaceId)?.ap.main_ip ?? "");
        yield [
          [
            ["id", String(link.id)],
            ["main_ip_a", ends[0] ?? ""],
            ["main_ip_b", ends[1] ?? ""],
          ],
          linkQuality(link),
        ];
      }
    })(),
  );
}

/** The cycle that made the build (mesh-api cycle), from its record. */
function* cycleFamilies(health: CycleHealth): Generator<string> {
  yield* family("mesh_cycle_runs_total", "counter", "Good runs of mesh-api cycle on this state, this one included.", [[[], health.run]]);
  yield* family(
    "mesh_cycle_source_last_import_timestamp_seconds",
    "gauge",
    "The instant (taken_at) of the run that last imported each source, in seconds since the Unix epoch.",
    [...health.sources]
      .sort((a, b) => compareCodePoints(a.source, b.source))
      .flatMap(({ source, at }): Sample[] => {
        const i = parseInstant(at);
        return typeof i === "string" ? [] : [[[["source", source]], i.micros / SECOND]];
      }),
  );
  yield* family(
    "mesh_cycle_previous_run_duration_seconds",
    "gauge",
    "How long the previous good run of mesh-api cycle took, from its start to its record (import, build, server configuration).",
    health.previousRunSeconds === undefined ? [] : [[[], health.previousRunSeconds]],
  );
  yield* family(
    "mesh_cycle_failed_runs",
    "gauge",
    "Runs of mesh-api cycle that failed between the previous good run and the one that made this build.",
    [[[], health.failedRuns]],
  );
}

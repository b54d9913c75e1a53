import { z } from "zod";

/** The kinds of change an import records (events.ts has each one's rule). */
export const EVENT_KINDS = [
  "accesspoint.appeared",
  "accesspoint.silent",
  "accesspoint.back",
  "accesspoint.flapping",
  "accesspoint.offline",
  "accesspoint.firmware",
  "accesspoint.moved",
  "accesspoint.position",
  "accesspoint.owner",
  "accesspoint.address",
  "link.appeared",
  "link.lost",
  "link.back",
  "link.flapping",
  "link.offline",
  "site.appeared",
  "site.members",
  "site.dissolved",
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

const Json = z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.unknown()), z.record(z.string(), z.unknown())]);

/** One event as the dump keeps it (`history/events.ndjson`) and the API answers it. */
export const ChangeEvent = z.strictObject({
  /** stable: the same change gets the same id in every build */
  id: z.string(),
  /** the instant of the state that shows the change (`taken_at` of the import that recorded it) */
  at: z.string(),
  kind: z.enum(EVENT_KINDS),
  /** what changed: an access point by its main_ip, a link by its id (with its ends' main_ip), a site by its id */
  subject: z.strictObject({
    type: z.enum(["accesspoint", "link", "site"]),
    id: z.string(),
    ends: z.tuple([z.string(), z.string()]).optional(),
  }),
  before: Json.optional(),
  after: Json.optional(),
});
export type ChangeEvent = z.infer<typeof ChangeEvent>;

const Counts = z.strictObject({ online: z.number().int(), flapping: z.number().int(), offline: z.number().int() });

/** What a state counted by status at its instant: one line a run in the dump's history, for the status page's charts. */
export const RunCounts = z.strictObject({ at: z.string(), accesspoints: Counts, links: Counts });
export type RunCounts = z.infer<typeof RunCounts>;

import type { Problem, Source } from "../problems.ts";

/** What a loader hands the core: raw records, each tagged with where it came from. */

export type RecordKind = "accesspoint" | "link";

export interface RawRecord {
  readonly kind: RecordKind;
  readonly source: Source;
  readonly value: unknown;
}

export interface LoadedDump {
  readonly network?: { readonly source: Source; readonly value: unknown };
  readonly records: RawRecord[];
  readonly files: string[];
  readonly problems: Problem[];
}

/**
 * ISO 8601 instants with microsecond precision. `Date` only keeps milliseconds, so the instant is kept
 * as whole epoch seconds plus microseconds and rendered like Python's `isoformat()` (as DRF does):
 * `.ffffff` always six digits, left out entirely when zero.
 */
export interface Instant {
  /** microseconds since the Unix epoch (exact below 2^53, i.e. for any year up to ~2255) */
  readonly micros: number;
  /** `YYYY-MM-DDTHH:MM:SS[.ffffff]Z` */
  readonly text: string;
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(Z|z|[+-]\d{2}(?::?\d{2})?)$/;

/**
 * The instants parsed lately, by their text: a dump's records share a few instants (an OLSR import
 * gives every access point and link it sees the same sighting), and parsing each anew was a tenth
 * of a cycle's import at 40,000 access points. Instants are never changed, so one object serves all.
 */
const parsed = new Map<string, Instant | string>();
const PARSED_AT_MOST = 4096;

/** Parses an ISO 8601 instant with an explicit offset; returns a reason text when it is not one. */
export function parseInstant(text: string): Instant | string {
  let instant = parsed.get(text);
  if (instant === undefined) {
    instant = parse(text);
    // an instant's text is short: a long one (a stranger's) is not kept
    if (text.length <= 40) {
      if (parsed.size >= PARSED_AT_MOST) parsed.clear();
      parsed.set(text, instant);
    }
  }
  return instant;
}

function parse(text: string): Instant | string {
  const m = ISO.exec(text);
  if (!m) return "not an ISO 8601 timestamp with time zone (e.g. 2026-11-22T11:27:49.564935Z)";
  const [, y, mo, d, h, mi, s = "00", frac = "", zone] = m;
  const year = Number(y),
    month = Number(mo),
    day = Number(d);
  const hour = Number(h),
    minute = Number(mi),
    second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return "no such date";
  if (hour > 23 || minute > 59 || second > 59) return "no such time of day";
  let offsetMinutes = 0;
  if (zone !== "Z" && zone !== "z") {
    const hhmm = zone.slice(1).replace(":", "");
    const oh = Number(hhmm.slice(0, 2));
    const om = Number(hhmm.slice(2) || "0");
    if (oh > 23 || om > 59) return "time zone offset out of range";
    offsetMinutes = (zone[0] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  // Python truncates digits beyond microseconds; so do we.
  const micro = Number(frac.slice(0, 6).padEnd(6, "0"));
  const epochSeconds = Date.UTC(year, month - 1, day, hour, minute, second) / 1000 - offsetMinutes * 60;
  const micros = epochSeconds * 1_000_000 + micro;
  return { micros, text: formatMicros(micros) };
}

export function formatMicros(micros: number): string {
  const seconds = Math.floor(micros / 1_000_000);
  const micro = micros - seconds * 1_000_000;
  const iso = new Date(seconds * 1000).toISOString(); // YYYY-MM-DDTHH:MM:SS.000Z
  const base = iso.slice(0, 19);
  return micro === 0 ? `${base}Z` : `${base}.${String(micro).padStart(6, "0")}Z`;
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `YYYY-MM-DD` calendar dates (firmware install dates). */
export function checkDate(text: string): string | undefined {
  const m = DATE.exec(text);
  if (!m) return "not a date of the form YYYY-MM-DD";
  const month = Number(m[2]),
    day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(Number(m[1]), month)) return "no such date";
  return undefined;
}

import type { Model, Status } from "../model/model.ts";
import { STATUSES } from "../model/model.ts";
import { html, page } from "../documents/html.ts";
import type { Places } from "../outputs/output.ts";
import type { ChangeEvent, RunCounts } from "./event.ts";
import { newestFirst, subjectUrl } from "./render.ts";
import { countByStatus, titleOf } from "./events.ts";

/**
 * `/status/`: the counts by status over the history window, as charts drawn in inline SVG, and the
 * newest changes (issue 42). No script and nothing from elsewhere: a browser with scripting off, or
 * a text browser for the table, shows all of it.
 */

const COLORS: Readonly<Record<Status, string>> = { online: "#2e7d32", flapping: "#ef6c00", offline: "#757575" };
const NEWEST = 50;

/** The counts of every run in the window, and this build's at its instant when the history does not end with it. */
export function countsSeries(model: Model, history: readonly RunCounts[]): RunCounts[] {
  const counts = [...history];
  const at = model.takenAt?.text;
  if (at !== undefined && counts.at(-1)?.at !== at) {
    counts.push({
      at,
      accesspoints: countByStatus(
        model.accesspoints.map((a) => a.lastseen_timestamp),
        model.takenAt,
      ),
      links: countByStatus(
        model.links.map((l) => l.timestamp),
        model.takenAt,
      ),
    });
  }
  return counts;
}

const W = 640;
const H = 180;
const PAD = { left: 48, right: 12, top: 12, bottom: 28 };

/** One chart: a line a status over the runs, with its axes' extremes written out. */
function chart(title: string, series: readonly RunCounts[], of: (c: RunCounts) => Record<Status, number>): string {
  const times = series.map((c) => Date.parse(c.at));
  const t0 = Math.min(...times);
  const t1 = Math.max(...times);
  const top = Math.max(1, ...series.flatMap((c) => STATUSES.map((s) => of(c)[s])));
  const x = (t: number) => PAD.left + (t1 === t0 ? (W - PAD.left - PAD.right) / 2 : ((t - t0) / (t1 - t0)) * (W - PAD.left - PAD.right));
  const y = (n: number) => H - PAD.bottom - (n / top) * (H - PAD.top - PAD.bottom);
  const r = (n: number) => Math.round(n * 10) / 10;
  const lines = STATUSES.map((s) => {
    const points = series.map((c, i) => `${r(x(times[i]))},${r(y(of(c)[s]))}`).join(" ");
    const mark = series.length === 1 ? `<circle cx="${r(x(times[0]))}" cy="${r(y(of(series[0])[s]))}" r="3" fill="${COLORS[s]}"/>` : "";
    return `<polyline fill="none" stroke="${COLORS[s]}" stroke-width="2" points="${points}"><title>${s}</title></polyline>${mark}`;
  });
  const last = series.at(-1)!;
  const legend = STATUSES.map((s) => `<span style="color:${COLORS[s]}">■</span> ${s} ${of(last)[s]}`).join(" · ");
  return [
    `<figure><figcaption><strong>${html(title)}</strong>: ${legend}</figcaption>`,
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="${html(title)} by status over time">`,
    `<line x1="${PAD.left}" y1="${H - PAD.bottom}" x2="${W - PAD.right}" y2="${H - PAD.bottom}" stroke="#999"/>`,
    `<line x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${H - PAD.bottom}" stroke="#999"/>`,
    `<text x="${PAD.left - 6}" y="${PAD.top + 10}" text-anchor="end" font-size="11">${top}</text>`,
    `<text x="${PAD.left - 6}" y="${H - PAD.bottom}" text-anchor="end" font-size="11">0</text>`,
    `<text x="${PAD.left}" y="${H - 8}" font-size="11">${html(series[0].at)}</text>`,
    `<text x="${W - PAD.right}" y="${H - 8}" text-anchor="end" font-size="11">${html(last.at)}</text>`,
    ...lines,
    "</svg></figure>",
  ].join("\n");
}

/**
 * The page: the charts, then the newest changes with links to their subjects, the feeds and the
 * JSON (`links`: the changes' URL and feed's path).
 */
export function statusPage(
  model: Model,
  history: { readonly events: readonly ChangeEvent[]; readonly counts: readonly RunCounts[] },
  places: Places,
  links: { readonly changes: string; readonly feed: string },
): string {
  const { events } = history;
  const series = countsSeries(model, history.counts);
  const newest = newestFirst(events).slice(0, NEWEST);
  const rows = newest.map(
    (e) =>
      `<tr><td><time datetime="${html(e.at)}">${html(e.at)}</time></td><td><a href="${html(subjectUrl(e, places.url))}">${html(titleOf(e))}</a></td></tr>`,
  );
  const window = series.length > 0 ? `from ${html(series[0].at)} to ${html(series.at(-1)!.at)}` : "none yet";
  return page("Network status", [
    "<h1>Network status</h1>",
    `<p>Access points and links by status at each import of the history window (${window}; ${series.length} ${series.length === 1 ? "import" : "imports"}), and the newest changes. The same as data: <a href="${links.changes}"><code>${links.changes}</code></a>, and as an Atom feed: <a href="${links.feed}"><code>${links.feed}</code></a>.</p>`,
    ...(series.length > 0
      ? [chart("Access points", series, (c) => c.accesspoints), chart("Links", series, (c) => c.links)]
      : ["<p>This build has no instant of its own: nothing to chart.</p>"]),
    `<h2>Newest changes</h2>`,
    rows.length > 0
      ? ["<table>", "<tr><th>When</th><th>What</th></tr>", ...rows, "</table>"].join("\n")
      : "<p>No change recorded in the window (a dump without history, or nothing changed).</p>",
    events.length > NEWEST ? `<p>${events.length - NEWEST} older changes are in <a href="${links.changes}">the list</a>.</p>` : "",
    `<p><a href="/">The API's landing page</a></p>`,
  ]);
}

import { rawRequest } from "./http.ts";

/**
 * A steady client of a served site (cycle.test, cycle-faults.test, served-link.test): `lanes` loops,
 * each asking the next of `targets` in turn and pausing between requests, until stopped. Every answer
 * must be 200 with a complete JSON body; anything else is a failure, named with its target.
 *
 * `served`, when given, says which build is served now (the link a swap repoints): a request during
 * which it changed was in flight while the build was swapped, and is counted (`inFlight`), so that a
 * test can show its swaps happened under reads, not between them.
 */
export interface SteadyClientOptions {
  readonly port: number;
  readonly targets: readonly string[];
  readonly lanes: number;
  /** the pause after the `i`th request of a lane, in milliseconds */
  readonly pause: (i: number) => number;
  /** a name for the failures (the server's) */
  readonly name?: string;
  /** which build is served now */
  readonly served?: () => string;
  /** each answer of 200, parsed */
  readonly onAnswer?: (target: string, body: unknown) => void;
}

export interface SteadyClient {
  /** answers of 200 with a complete JSON body */
  readonly answered: number;
  readonly failures: readonly string[];
  /** answered requests in flight while `served` changed */
  readonly inFlight: number;
  /** the largest body among them, in bytes */
  readonly inFlightBytes: number;
  /** stops the lanes and waits for their last requests */
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function steadyClient(o: SteadyClientOptions): SteadyClient {
  let running = true;
  const failures: string[] = [];
  const tally = { answered: 0, inFlight: 0, inFlightBytes: 0 };
  const prefix = o.name ? `${o.name} ` : "";
  const lane = async (first: number) => {
    for (let i = first; running; i += o.lanes) {
      const target = o.targets[i % o.targets.length];
      try {
        const before = o.served?.();
        // A request the server never answers is a failure, not a test that waits for its time-out.
        const r = await rawRequest(o.port, "GET", target, {}, 10_000);
        const after = o.served?.();
        const body: unknown = JSON.parse(r.body.toString("utf8"));
        if (r.status !== 200) failures.push(`${prefix}${target}: ${r.status}`);
        else {
          tally.answered++;
          o.onAnswer?.(target, body);
          if (before !== after) {
            tally.inFlight++;
            tally.inFlightBytes = Math.max(tally.inFlightBytes, r.body.length);
          }
        }
      } catch (err) {
        failures.push(`${prefix}${target}: ${(err as Error).message}`);
      }
      await sleep(o.pause(i));
    }
  };
  const lanes = Array.from({ length: o.lanes }, (_, i) => lane(i));
  return {
    get answered() {
      return tally.answered;
    },
    failures,
    get inFlight() {
      return tally.inFlight;
    },
    get inFlightBytes() {
      return tally.inFlightBytes;
    },
    async stop() {
      running = false;
      await Promise.all(lanes);
    },
  };
}

/**
 * The defaults of the commands' options, stated once: the library falls back to them when an option
 * is left out, and the command line shows them in its help as the options' defaults.
 */
export const DEFAULTS = {
  /** the dump folder commands read */
  data: "data",
  /** the build folder commands write, serve and compare */
  dist: "dist",
  /** snapshots kept by `snapshot` and `build --snapshot` */
  keep: 30,
  /** detail routes `check` requests, spread over all kinds */
  sample: 200,
  /** where `preview` listens */
  port: 8080,
  host: "127.0.0.1",
} as const;

import { metricsBody } from "../history/metrics.ts";
import { outputGroup } from "./output.ts";

/**
 * `/metrics`: the network's state in the Prometheus text exposition format 0.0.4 (history/metrics.ts;
 * docs/metrics.md), with the health of the cycle that made the build when one did. A site file with a
 * type of its own, which every host serves as it says.
 */
export const METRICS = outputGroup({
  kind: "metrics",
  files: { metrics: "/metrics" },
  siteFiles: ["metrics"],
  types: { metrics: "text/plain; version=0.0.4" },
  *bodies(model) {
    yield { file: "metrics", body: metricsBody(model, model.health) };
  },
});

import { setFlagsFromString } from "node:v8";

/**
 * A build allocates far more than it keeps: every response is rendered, written and dropped. By
 * default V8 lets the heap grow to two or three times what it keeps before it collects, which put a
 * 100 MiB dump's build over the 1 GiB memory target. With a growth factor of 1.25 the peak follows
 * what the model keeps (README, "Performance"): at 40,000 access points 20 to 45 MiB lower than
 * with 1.5, for the same CPU (1.15 cost a sixth more).
 *
 * Reading the dump and making the model is the other way round: nearly all it allocates stays, and
 * each collection of a heap that only grows finds little to free. With 1.25 there too, a recycled
 * cycle at 40,000 access points marked its growing heap 20 times during its import, which took 6.7
 * to 7.8 s; growing by 100 % until the model is made, 5.3 to 5.9 s, and its peak stays at the end of
 * its writing (552 to 578 MiB, target 640). A build's peak is another matter: at 100 % it came
 * while loading, 546 MiB at 40,000 access points (target 512), at 50 % 473 MiB
 * (docs/performance.md). So a cycle imports at 100 % and a build loads at 50 %; each command passes
 * `loaded` to the pipeline (PipelineOptions.loaded), which returns to 25 %.
 *
 * The setting is process-wide, so the command line (and the benchmark, which measures it) apply it;
 * the library leaves its host process alone.
 */
export const HEAP_GROWTH_PERCENT = { importing: 100, loading: 50, writing: 25 } as const;

export function limitHeapGrowth(phase: keyof typeof HEAP_GROWTH_PERCENT = "writing"): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWTH_PERCENT[phase]}`);
}

/** For PipelineOptions.loaded: the model is made, the rest of the run allocates what it drops. */
export const loaded = (): void => limitHeapGrowth("writing");

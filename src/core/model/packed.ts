/**
 * The rendered JSON a model keeps for the whole build (every access point's and interface's, which
 * the lists repeat: 76 MB at 40,000 access points), packed into large blocks instead of a small
 * Buffer each.
 *
 * A small Buffer comes from Node.js's 8 KiB pool: a pool block is given up when the next text does
 * not fit, so a fifth of the pool went unused (95 MB of blocks held 76 MB), and the blocks, made one
 * by one while everything the load and validation allocate is made and freed around them, stayed
 * pinned between those freed chunks in the C library's heap, which could then not shrink
 * (docs/performance.md). A block of 32 MiB is beyond the size the C library ever serves from that
 * heap (its mapping threshold is at most 32 MiB): each is a mapping of its own, and only the part
 * written is ever in memory. A small model gets blocks of about its size: each block counts whole
 * towards V8's external memory, which decides when it collects.
 */
const LARGEST = 32 * 2 ** 20;
const SMALLEST = 64 * 1024;

export class TextBlocks {
  private readonly size: number;
  private block: Buffer | undefined;
  private used = 0;

  /** `expected`: about how many bytes the texts will take */
  constructor(expected: number) {
    this.size = Math.min(LARGEST, Math.max(SMALLEST, Math.ceil(expected)));
  }

  /** The UTF-8 bytes of `text`, in the current block when they fit. */
  pack(text: string): Buffer {
    const length = Buffer.byteLength(text, "utf8");
    if (length > this.size / 8) return Buffer.from(text, "utf8"); // a long one (a router's huge value) alone
    if (this.block === undefined || this.used + length > this.block.length) {
      this.block = Buffer.allocUnsafeSlow(this.size);
      this.used = 0;
    }
    const start = this.used;
    this.used += this.block.write(text, start, "utf8");
    return this.block.subarray(start, this.used);
  }
}

/**
 * The rendered JSON a model keeps for the whole build (every access point's and interface's, which
 * the lists repeat: 76 MB at 40,000 access points), packed into large blocks instead of a small
 * Buffer each.
 *
 * A small Buffer comes from Node.js's 8 KiB pool: a pool block is given up when the next text does
 * not fit, so a fifth of the pool went unused (95 MB of blocks held 76 MB), and the blocks, made one
 * by one while everything the load and validation allocate is made and freed around them, stayed
 * pinned between those freed chunks in the C library's heap, which could then neither shrink nor
 * reuse the room (docs/performance.md). A block of 32 MiB is beyond the size the C library ever
 * serves from that heap (its mapping threshold is at most 32 MiB): each is a mapping of its own, and
 * only the part written is ever in memory.
 */
const BLOCK = 32 * 2 ** 20;

export class TextBlocks {
  private block: Buffer | undefined;
  private used = 0;

  /** The UTF-8 bytes of `text`, in the current block when they fit. */
  pack(text: string): Buffer {
    const length = Buffer.byteLength(text, "utf8");
    if (length > BLOCK / 64) return Buffer.from(text, "utf8"); // a long one (a router's huge value) alone
    if (this.block === undefined || this.used + length > BLOCK) {
      this.block = Buffer.allocUnsafeSlow(BLOCK);
      this.used = 0;
    }
    const start = this.used;
    this.used += this.block.write(text, start, "utf8");
    return this.block.subarray(start, this.used);
  }
}

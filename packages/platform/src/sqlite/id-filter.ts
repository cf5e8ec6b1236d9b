/**
 * The ids ever added, as a Bloom filter: `mayHave` is true for every id added, and false for
 * nearly every other one (measured: 0.4-0.7 % answer true all the same, from 200,000 to 4 million
 * ids). A rebuild asks its store for documents that do not exist yet (every new forecast,
 * notification, friendship): with this, the store knows most of them absent without a SELECT, in
 * bounded memory (2-4 bytes per id), where a Set of the ids would grow with the history. The
 * embedded event store knows most new streams absent the same way (log-event-store.ts). Never
 * shrinks: removing is not supported, so an id deleted, or added by a unit later rolled back, is
 * still "maybe" (then SQLite is asked).
 *
 * Written here rather than taken from npm: the filters there bring a dozen dependencies (lodash,
 * seedrandom, an xxhash in JavaScript) for these forty lines.
 *
 * It grows in layers (a scalable Bloom filter): each holds up to `bits / 16` ids, then a layer
 * twice as large takes the next ones, so each full layer answers about 0.1 % falsely whatever the
 * number of ids (the layers' rates add up), and a small table costs one small layer.
 */
export class IdFilter {
  readonly #layers: { bits: Uint32Array; mask: number; capacity: number; count: number }[] = [];

  /** `firstBits`: the first layer's size, a power of two from 2^5 to 2^30 (the probes are masked to it). */
  constructor(private readonly firstBits = 1 << 20) {
    if (!Number.isInteger(Math.log2(firstBits)) || firstBits < 32 || firstBits > 2 ** 30) throw new Error(`an id filter's first layer is a power of two of bits from 2^5 to 2^30, not ${firstBits}`);
    this.#grow();
  }

  add(id: string): void {
    let layer = this.#layers[this.#layers.length - 1]!;
    if (layer.count >= layer.capacity) layer = this.#grow();
    const [h1, h2] = hashes(id);
    for (let i = 0; i < PROBES; i++) {
      const bit = (h1 + i * h2) & layer.mask;
      layer.bits[bit >>> 5]! |= 1 << (bit & 31);
    }
    layer.count++;
  }

  /** False only for an id never added. */
  mayHave(id: string): boolean {
    const [h1, h2] = hashes(id);
    for (const layer of this.#layers) {
      let all = true;
      for (let i = 0; i < PROBES && all; i++) {
        const bit = (h1 + i * h2) & layer.mask;
        all = (layer.bits[bit >>> 5]! & (1 << (bit & 31))) !== 0;
      }
      if (all) return true;
    }
    return false;
  }

  /** The filter as bytes (`fromBytes` reads them back): a few MB for millions of ids. */
  toBytes(): Buffer {
    const head = 8 + 12 * this.#layers.length;
    const out = Buffer.alloc(head + this.#layers.reduce((n, layer) => n + layer.bits.byteLength, 0));
    out.writeUInt32LE(BYTES_MAGIC, 0);
    out.writeUInt32LE(this.#layers.length, 4);
    let at = head;
    this.#layers.forEach((layer, i) => {
      out.writeUInt32LE(layer.bits.length, 8 + 12 * i);
      out.writeUInt32LE(layer.capacity, 12 + 12 * i);
      out.writeUInt32LE(layer.count, 16 + 12 * i);
      // Little-endian whatever the machine's order, as every number here.
      for (const word of layer.bits) at = out.writeUInt32LE(word, at);
    });
    return out;
  }

  /** A filter `toBytes` wrote; null for anything else (then the ids must be added again). */
  static fromBytes(bytes: Uint8Array): IdFilter | null {
    const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (view.length < 8 || view.readUInt32LE(0) !== BYTES_MAGIC) return null;
    const count = view.readUInt32LE(4);
    const head = 8 + 12 * count;
    if (count === 0 || view.length < head) return null;
    const filter = new IdFilter(32);
    filter.#layers.length = 0;
    let at = head;
    for (let i = 0; i < count; i++) {
      const words = view.readUInt32LE(8 + 12 * i);
      const bits = words * 32;
      // Each layer a power of two of bits, as #grow makes them.
      if (bits < 32 || bits > 2 ** 30 || !Number.isInteger(Math.log2(bits)) || at + words * 4 > view.length) return null;
      const layer = { bits: new Uint32Array(words), mask: bits - 1, capacity: view.readUInt32LE(12 + 12 * i), count: view.readUInt32LE(16 + 12 * i) };
      for (let w = 0; w < words; w++, at += 4) layer.bits[w] = view.readUInt32LE(at);
      filter.#layers.push(layer);
    }
    return at === view.length ? filter : null;
  }

  #grow() {
    // Twice the last layer (of a filter read back too), up to 2^30 bits (128 MB): the masks stay within 32-bit integers.
    const last = this.#layers[this.#layers.length - 1];
    const bits = last ? Math.min((last.mask + 1) * 2, 2 ** 30) : this.firstBits;
    const layer = { bits: new Uint32Array(bits >>> 5), mask: bits - 1, capacity: bits >>> 4, count: 0 };
    this.#layers.push(layer);
    return layer;
  }
}

/** Leads the bytes of a filter (toBytes), with the layout's version: "IdF1". */
const BYTES_MAGIC = 0x31466449;

/** Bits set per id: with 16 bits per id, 6 probes give about 0.1 % false positives per full layer. */
const PROBES = 6;

/** Two independent 32-bit hashes of the string (FNV-1a, and the same with another basis and a final mix): double hashing derives the probes from them. */
const pair: [number, number] = [0, 0];
function hashes(id: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x9747b28c;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  b ^= b >>> 15;
  b = Math.imul(b, 0x2c1b3c6d);
  b ^= b >>> 12;
  pair[0] = a >>> 0;
  // Odd: every probe lands on another bit.
  pair[1] = (b | 1) >>> 0;
  return pair;
}

/**
 * A small seeded PRNG (sfc32) and the draws the seed needs. Every choice of the generated history
 * comes from here, so one `--seed` gives the same people, groups, Casties and times on every run
 * (ids are drawn by the services' own helpers and differ). Each phase takes its own stream
 * (`new Random(seed, 'forecasts')`), so changing one phase's draws leaves the others alone.
 */
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number, stream = '') {
    // cyrb128 of "<seed>:<stream>" spreads any seed over the 128 bits of state.
    const key = `${seed}:${stream}`;
    let h1 = 1779033703;
    let h2 = 3144134277;
    let h3 = 1013904242;
    let h4 = 2773480762;
    for (let i = 0; i < key.length; i++) {
      const k = key.charCodeAt(i);
      h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
      h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
      h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
      h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
    }
    h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
    h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
    h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
    h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
    this.a = (h1 ^ h2 ^ h3 ^ h4) >>> 0;
    this.b = (h2 ^ h1) >>> 0;
    this.c = (h3 ^ h1) >>> 0;
    this.d = (h4 ^ h1) >>> 0;
    for (let i = 0; i < 12; i++) this.next();
  }

  /** Uniform in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) >>> 0;
    return t / 4294967296;
  }

  /** Uniform integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** Uniform in [min, max). */
  between(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** Standard normal (Box-Muller). */
  normal(): number {
    const u = 1 - this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }

  /** Log-normal weight with median 1: heavy-tailed popularity and activity. */
  logNormal(sigma: number): number {
    return Math.exp(sigma * this.normal());
  }

  /** Exponential with this mean. */
  exponential(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }

  /** Fisher-Yates, in place. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [items[i], items[j]] = [items[j]!, items[i]!];
    }
    return items;
  }

  /**
   * `count` distinct indexes of `weights`, each drawn with probability proportional to its weight
   * (Efraimidis-Spirakis keys): the weighted sample without replacement, in order of the keys.
   */
  weightedSample(weights: readonly number[], count: number): number[] {
    const keys = weights.map((w, i) => ({ i, key: w > 0 ? Math.log(1 - this.next()) / w : -Infinity }));
    keys.sort((x, y) => y.key - x.key);
    return keys.slice(0, Math.min(count, keys.length)).filter((k) => k.key > -Infinity).map((k) => k.i);
  }
}

/**
 * Draws indexes in proportion to fixed weights in O(log n): cumulative sums and a binary search.
 * Cheap to build for thousands of weights and fast for hundreds of thousands of draws.
 */
export class WeightedIndex {
  private readonly cumulative: Float64Array;
  readonly total: number;

  constructor(weights: ArrayLike<number>) {
    this.cumulative = new Float64Array(weights.length);
    let sum = 0;
    for (let i = 0; i < weights.length; i++) {
      sum += Math.max(0, weights[i]!);
      this.cumulative[i] = sum;
    }
    this.total = sum;
  }

  get size(): number {
    return this.cumulative.length;
  }

  /** An index, or -1 when every weight is 0. */
  draw(random: Random): number {
    if (this.total <= 0) return -1;
    const target = random.next() * this.total;
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cumulative[mid]! > target) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

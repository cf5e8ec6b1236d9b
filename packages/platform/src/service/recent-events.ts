/**
 * The ids of the last `capacity` events of one partition (FIFO): an event seen again among them
 * is a copy a relay published again, which a projection must not apply twice (it would count the
 * event twice: checkpoints guard by offset, and a copy has its own).
 */
export class RecentEvents {
  readonly #ids = new Set<string>();
  readonly #order: (string | undefined)[];
  #next = 0;

  constructor(private readonly capacity: number) {
    this.#order = new Array<string | undefined>(capacity);
  }

  has(id: string): boolean {
    return this.#ids.has(id);
  }

  add(id: string): void {
    if (this.#ids.has(id)) return;
    const oldest = this.#order[this.#next];
    if (oldest !== undefined) this.#ids.delete(oldest);
    this.#order[this.#next] = id;
    this.#next = (this.#next + 1) % this.capacity;
    this.#ids.add(id);
  }
}

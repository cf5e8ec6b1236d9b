/** The clock port. Domain code never reads time: commands carry `now` taken from here. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * A clock moved on purpose (CLOCK=manual, tests, demos). Without `frozenAt` it runs with real
 * time plus the offset it was advanced by; with `frozenAt` it stands still until advanced.
 */
export class ManualClock implements Clock {
  #offsetMs = 0;
  readonly #frozenAt: number | null;
  constructor(frozenAt?: Date) {
    this.#frozenAt = frozenAt ? frozenAt.getTime() : null;
  }
  now(): Date {
    return new Date((this.#frozenAt ?? Date.now()) + this.#offsetMs);
  }
  advance(seconds: number): Date {
    this.#offsetMs += seconds * 1000;
    return this.now();
  }
}

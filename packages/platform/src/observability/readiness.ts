import type { ReadinessCheck, ReadModelLag, Readiness } from '@castie/contracts';
import type { Cache } from '../ports/cache.ts';
import type { ProjectionRunner } from '../service/projections.ts';
import { within } from './bounded.ts';

/** Default bound of readiness: a read model at most this many records behind the log is ready. */
export const DEFAULT_READY_MAX_LAG_EVENTS = 1000;

/** A dependency the process cannot serve without; `probe` rejects when it is not usable. */
export interface DependencyCheck {
  name: string;
  probe(): Promise<void>;
}

/** The read models a process hosts, per service: the source of readiness and of the lag gauge. */
export class ReadModelWatch {
  readonly #watched: { service: string; readModels: Pick<ProjectionRunner, 'group' | 'lag'> }[] = [];

  watch(service: string, readModels: Pick<ProjectionRunner, 'group' | 'lag'>): void {
    this.#watched.push({ service, readModels });
  }

  /** Every projection's lag now, in records. */
  async lag(): Promise<ReadModelLag[]> {
    const all: ReadModelLag[] = [];
    for (const { service, readModels } of this.#watched) {
      for (const { projection, lagEvents } of await readModels.lag()) all.push({ service, group: readModels.group, projection, lagEvents });
    }
    return all;
  }
}

export interface ReadinessOptions {
  readModels?: Pick<ReadModelWatch, 'lag'>;
  /** Ready while no projection is more than this many records behind (default 1000). */
  maxLagEvents?: number;
  checks?: readonly DependencyCheck[];
  /** A check (and reading the lag) that takes longer than this fails (default 1 s). */
  timeoutMs?: number;
}

/**
 * Decides GET /readyz: ready when every read model of the process is at most `maxLagEvents`
 * records behind the end of the log and every dependency check passed within its time bound.
 * A lag that cannot be read (the log unreachable) is not ready either.
 */
export class ReadinessProbe {
  readonly maxLagEvents: number;
  readonly #timeoutMs: number;

  constructor(private readonly options: ReadinessOptions = {}) {
    this.maxLagEvents = options.maxLagEvents ?? DEFAULT_READY_MAX_LAG_EVENTS;
    this.#timeoutMs = options.timeoutMs ?? 1000;
  }

  async report(): Promise<Readiness> {
    const checks: ReadinessCheck[] = [];
    let readModels: ReadModelLag[] = [];
    const source = this.options.readModels;
    if (source) {
      try {
        readModels = await this.#bounded(source.lag());
      } catch (error) {
        checks.push({ name: 'read-models', ok: false, error: messageOf(error) });
      }
    }
    for (const check of this.options.checks ?? []) {
      try {
        await this.#bounded(check.probe());
        checks.push({ name: check.name, ok: true });
      } catch (error) {
        checks.push({ name: check.name, ok: false, error: messageOf(error) });
      }
    }
    const ready = checks.every((c) => c.ok) && readModels.every((l) => l.lagEvents <= this.maxLagEvents);
    return { status: ready ? 'ready' : 'not_ready', maxLagEvents: this.maxLagEvents, readModels, checks };
  }

  #bounded<T>(work: Promise<T>): Promise<T> {
    return within(work, this.#timeoutMs);
  }
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error)).slice(0, 200);

/** The cache (memory or Redis) answers a read: the gateway cannot count limits or sessions without it. */
export const cacheAnswers = (cache: Pick<Cache, 'get'>): DependencyCheck => ({
  name: 'cache',
  probe: async () => void (await cache.get('readiness-probe')),
});

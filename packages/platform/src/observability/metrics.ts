import type { ReadModelLag } from '@castie/contracts';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ProjectionObserver } from '../service/projections.ts';
import { within } from './bounded.ts';

/** What a service counts, with its name already on every label set (a `ServiceDeps` member). */
export interface ServiceMetrics extends ProjectionObserver {
  readonly service: string;
  /** One lookup in a verified-credentials cache: in identity a hit spares an argon2id run, in a gateway a call to identity. */
  credentialCacheLookup(hit: boolean): void;
  /** One request of a route that repeats answers (RepeatedAnswers): a hit is given again as it was. */
  repeatedAnswerLookup(hit: boolean): void;
}

export interface MetricsOptions {
  /** Node's process metrics (CPU, memory, event loop, GC) too; default true. */
  processMetrics?: boolean;
  /** Read at every scrape for `castie_projection_lag_events`. */
  readModelLag?: () => Promise<readonly ReadModelLag[]>;
}

/** Latencies of requests: 5 ms to 10 s (session consistency waits at most 3 s). */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Latencies of appends: an fdatasync on a laptop is about a millisecond, a Kafka ack a few. */
const APPEND_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** How long a scrape waits for the log's end offsets. */
const LAG_TIMEOUT_MS = 2000;

/** A status code's class (`2xx`…): five label values instead of sixty. */
export const statusClass = (statusCode: number): string => `${Math.floor(statusCode / 100)}xx`;

/**
 * Counts per service observed on every request, added to their counter when it is scraped:
 * prom-client hashes the labels of every `inc`, even on a child bound to them, and these are
 * counted on the paths a request through the gateway takes (a kept credential, a repeated answer).
 */
class ScrapedCounts {
  readonly #counts = new Map<string, { value: number }>();

  /** The count of `service`: the same one for every caller. */
  of(service: string): { value: number } {
    let count = this.#counts.get(service);
    if (!count) this.#counts.set(service, (count = { value: 0 }));
    return count;
  }

  drainInto(counter: Counter<'service'>): void {
    for (const [service, count] of this.#counts) {
      if (count.value === 0) continue;
      counter.inc({ service }, count.value);
      count.value = 0;
    }
  }
}

/**
 * The metrics of one process, on a registry of its own (never prom-client's global one, so
 * several systems built in one test process do not collide). The embedded process has one for
 * everything it hosts: labels carry the service. Label values are bounded: route patterns (never
 * raw URLs), methods, status classes, topics, consumer groups and projection names.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly #http: Histogram<'service' | 'method' | 'route' | 'status_class'>;
  readonly #append: Histogram<'topic' | 'outcome'>;
  readonly #deadLetters: Counter<'service' | 'group'>;
  readonly #checkpointFailures: Counter<'file'>;
  /** The counts observed on every request, added to their counters at each scrape. */
  readonly #counts: Record<'credentialHits' | 'credentialMisses' | 'repeatedHits' | 'repeatedMisses', ScrapedCounts>;

  constructor(options: MetricsOptions = {}) {
    const registers = [this.registry];
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.#http = new Histogram({
      name: 'castie_http_request_duration_seconds',
      help: 'Time from request to response, per service, route pattern, method and status class.',
      labelNames: ['service', 'method', 'route', 'status_class'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    this.#append = new Histogram({
      name: 'castie_event_log_append_duration_seconds',
      help: 'Time until the event log acknowledged an append (durable), per topic; a topic has one writing service.',
      labelNames: ['topic', 'outcome'],
      buckets: APPEND_BUCKETS,
      registers,
    });
    const readModelLag = options.readModelLag;
    const lag: Gauge<'service' | 'group' | 'projection'> = new Gauge({
      name: 'castie_projection_lag_events',
      help: 'Records of the log a projection has not applied yet (end of the log minus its position), per service.',
      labelNames: ['service', 'group', 'projection'],
      registers,
      ...(readModelLag
        ? {
            // A lag that cannot be read (the log unreachable) leaves the gauge empty rather than
            // failing the whole scrape; /readyz says why.
            async collect() {
              lag.reset();
              const lags = await within(readModelLag(), LAG_TIMEOUT_MS).catch(() => []);
              for (const l of lags) lag.set({ service: l.service, group: l.group, projection: l.projection }, l.lagEvents);
            },
          }
        : {}),
    });
    this.#deadLetters = new Counter({
      name: 'castie_dead_letters_total',
      help: 'Records a projection runner sent to its dead-letter topic `<group>.dead-letter`.',
      labelNames: ['service', 'group'],
      registers,
    });
    /** A counter per service whose counts are plain numbers until a scrape adds them (ScrapedCounts). */
    const scraped = (name: string, help: string): ScrapedCounts => {
      const counts = new ScrapedCounts();
      new Counter({
        name,
        help,
        labelNames: ['service'],
        registers,
        collect() {
          counts.drainInto(this);
        },
      });
      return counts;
    };
    this.#counts = {
      credentialHits: scraped('castie_credential_cache_hits_total', 'Presented credentials found verified in the cache (identity: no argon2id run; gateway: identity not asked).'),
      credentialMisses: scraped('castie_credential_cache_misses_total', 'Presented credentials not found verified (identity: checked with argon2id; gateway: asked of identity), or changed since.'),
      repeatedHits: scraped('castie_repeated_answers_hits_total', 'Requests of a route that repeats answers given the answer kept for the same user and URL (the read models unchanged since).'),
      repeatedMisses: scraped('castie_repeated_answers_misses_total', 'Requests of a route that repeats answers made anew: none kept, or the read models changed since (or time did), or the store cannot tell.'),
    };
    this.#checkpointFailures = new Counter({
      name: 'castie_sqlite_checkpoint_failures_total',
      help: "WAL checkpoints the process's checkpoint thread could not run, per database file (`thread`: the thread itself stopped, for every file); those files then checkpoint in their own commits past 16 MB of WAL, with longer stalls.",
      labelNames: ['file'],
      registers,
    });
  }

  /** One answered HTTP request; `route` is the matched pattern, absent when no route matched. */
  observeRequest(labels: { service: string; method: string; route: string | undefined; statusCode: number }, seconds: number): void {
    this.#http.observe({ service: labels.service, method: labels.method, route: labels.route ?? 'unmatched', status_class: statusClass(labels.statusCode) }, seconds);
  }

  observeAppend(topic: string, outcome: 'ok' | 'error', seconds: number): void {
    this.#append.observe({ topic, outcome }, seconds);
  }

  forService(service: string): ServiceMetrics {
    const counts = this.#counts;
    const [credentialHits, credentialMisses] = [counts.credentialHits.of(service), counts.credentialMisses.of(service)];
    const [repeatedHits, repeatedMisses] = [counts.repeatedHits.of(service), counts.repeatedMisses.of(service)];
    return {
      service,
      deadLettered: (group) => this.#deadLetters.inc({ service, group }),
      credentialCacheLookup: (hit) => void (hit ? credentialHits.value++ : credentialMisses.value++),
      repeatedAnswerLookup: (hit) => void (hit ? repeatedHits.value++ : repeatedMisses.value++),
    };
  }

  /** The checkpoint thread could not checkpoint `file` (a file name, never a path), or stopped (`thread`). */
  checkpointFailed(file: string): void {
    this.#checkpointFailures.inc({ file });
  }

  /** The exposition for GET /metrics. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

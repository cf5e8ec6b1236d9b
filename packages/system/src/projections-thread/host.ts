// The embedded profile runs every service's projection writers in one thread of their own, once
// they caught up with the log at start (a rebuild at start still runs before, in rebuild/ or on
// the event loop). Under a load of forecasts the projections took about a third of the event
// loop: decoding each event, applying it to the read models and committing them, while the
// machine's second core was half idle. Here the main thread keeps the log: it reads the batches
// (so a user waiting for their own write still brings the next batch forward, and `waitFor` is
// answered without crossing threads) and hands them to the thread, which applies and commits them
// on its own connection to each service's file, then says which documents each commit changed;
// the main thread's store forgets what it cached of them before the batch counts as handled.
// Requests read the files as before, through their own connections (WAL: readers never wait).
//
// If the thread fails, each service's projections go on on the event loop from their last
// committed checkpoints, as after a restart, and the service's store forgets what it cached.
import type { DeadLetter } from '@castie/contracts';
import { READ_MODELS_WAIT_MS, startProjections, type LogPosition, type ProjectionLag, type ProjectionRunner, type ProjectionRunnerOptions, type ProjectionsHost, type StartAt, type Subscription } from '@castie/platform';
import type { SqliteDocumentStore } from '@castie/platform/sqlite/sqlite-document-store';
import type { FastifyBaseLogger } from 'fastify';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { errorData, errorFrom, type Changed, type FromThread, type LogCalls, type RunnerCalls, type SubscriptionAsked, type ToThread } from './messages.ts';

type Request = Extract<ToThread, { type: 'serve' | 'call' | 'startAt' | 'batch' }>;
type Unnumbered<T> = T extends unknown ? Omit<T, 'id'> : never;

/** The projections thread of a process, and the runners it hosts. */
export class ProjectionsThread {
  #worker: Worker | null = null;
  #closing = false;
  /** Set once the thread failed: runners it hosted went on on the event loop, and no more are taken over. */
  #failed: Error | null = null;
  #next = 0;
  readonly #pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  readonly #hosted = new Map<string, HostedRunner>();

  constructor(private readonly logger?: FastifyBaseLogger) {}

  /** The host of the projections of `store` (a file): the thread, which tells this store what its commits changed. */
  for(store: SqliteDocumentStore): ProjectionsHost {
    return { takeOver: (runner, options) => this.#takeOver(store, runner, options) };
  }

  /** Ends the thread (the hosted runners were stopped first: their services closed). */
  async close(): Promise<void> {
    this.#closing = true;
    await this.#worker?.terminate();
    this.#worker = null;
  }

  /** Whether the thread failed (the runners it hosted went on on the event loop). */
  get failed(): boolean {
    return this.#failed !== null;
  }

  /** The thread, for tests that end it to see the services go on. */
  get worker(): Worker | null {
    return this.#worker;
  }

  async #takeOver(store: SqliteDocumentStore, runner: ProjectionRunner, options: ProjectionRunnerOptions): Promise<ProjectionRunner> {
    // Stopped whatever follows: a failure leaves no runner of the group running, here or there.
    await runner.stop();
    if (this.#failed) throw this.#failed;
    if (store.path === ':memory:') throw new Error('a store in memory cannot be shared with a thread');
    const hosted = new HostedRunner(this, store, options, runner.applied());
    this.#hosted.set(options.group, hosted);
    try {
      await this.request({
        type: 'serve',
        group: options.group,
        storePath: store.path,
        tellCommitted: options.committed !== undefined,
        ...(options.attempts !== undefined ? { attempts: options.attempts } : {}),
        ...(options.log.republishedWithin !== undefined ? { republishedWithin: options.log.republishedWithin } : {}),
      });
    } catch (error) {
      this.#hosted.delete(options.group);
      await hosted.unsubscribeAll();
      throw error;
    }
    hosted.serving = true;
    return hosted;
  }

  /** Asks the thread, and resolves with its answer (after the store forgot what the answer says changed). */
  request(message: Unnumbered<Request>): Promise<unknown> {
    if (this.#failed) return Promise.reject(this.#failed);
    const id = ++this.#next;
    const thread = this.#thread();
    if (this.#pending.size === 0) thread.ref();
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      thread.postMessage({ ...message, id } as ToThread);
    });
  }

  forget(group: string): void {
    this.#hosted.delete(group);
  }

  #thread(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(workerEntry());
    worker.on('message', (message: FromThread) => this.#received(message));
    worker.on('error', (error) => this.#fail(error));
    worker.on('exit', (code) => {
      if (!this.#closing) this.#fail(new Error(`the projections thread exited with code ${code}`));
    });
    // The thread keeps the process alive only while it is asked something (a start that failed
    // must not hang on it). After the listeners: adding one refs the thread again.
    worker.unref();
    return (this.#worker = worker);
  }

  #received(message: FromThread): void {
    switch (message.type) {
      case 'log': {
        const group = typeof message.fields.group === 'string' ? message.fields.group : null;
        const logger = (group && this.#hosted.get(group)?.logger) || this.logger;
        return void logger?.[message.level](message.fields, message.msg);
      }
      case 'reply': {
        this.#hosted.get(message.group)?.changed(message.changed);
        const pending = this.#pending.get(message.id);
        this.#pending.delete(message.id);
        if (this.#pending.size === 0) this.#worker?.unref();
        if (message.error) pending?.reject(errorFrom(message.error));
        else pending?.resolve(message.value);
        return;
      }
      case 'committed': {
        const hosted = this.#hosted.get(message.group);
        hosted?.changed(message.changed);
        return hosted?.committed(message.events);
      }
      case 'deadLettered':
        return this.#hosted.get(message.group)?.deadLettered();
      case 'ask': {
        const hosted = this.#hosted.get(message.group);
        const answered = hosted ? hosted.answer(message.method, message.args) : Promise.reject(new Error(`${message.group} is not hosted`));
        answered.then(
          (value) => this.#worker?.postMessage({ type: 'answer', id: message.id, value } satisfies ToThread),
          (error: unknown) => this.#worker?.postMessage({ type: 'answer', id: message.id, error: errorData(error) } satisfies ToThread),
        );
      }
    }
  }

  #fail(error: Error): void {
    if (this.#failed) return;
    this.#failed = error;
    this.logger?.error({ err: error }, 'the projections thread failed: the read models go on on the event loop from their last commits');
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
    // A group still being handed over is not: its takeOver fails, and its runner starts over here.
    for (const hosted of this.#hosted.values()) if (hosted.serving) hosted.fallBack();
  }
}

/**
 * A service's runner whose projections run in the thread. Waiting for positions is answered here,
 * by the subscription that feeds the thread; what only the thread's runner knows is asked there.
 */
class HostedRunner implements ProjectionRunner {
  readonly #subscriptions = new Map<number, Subscription>();
  #applied: number;
  /** Set once the thread failed: the runner on the event loop that takes over (and, once started, itself). */
  #local: Promise<ProjectionRunner> | null = null;
  #localRunner: ProjectionRunner | null = null;
  /** Set once the thread serves the group (until then a failure is its takeOver's). */
  serving = false;
  #stopping = false;

  constructor(
    private readonly thread: ProjectionsThread,
    private readonly store: SqliteDocumentStore,
    private readonly options: ProjectionRunnerOptions,
    applied: number,
  ) {
    this.#applied = applied;
  }

  get group(): string {
    return this.options.group;
  }

  get logger(): FastifyBaseLogger | undefined {
    return this.options.logger;
  }

  changed(changed: readonly Changed[]): void {
    for (const [table, ids] of changed) this.store.changedElsewhere(table, ids);
  }

  committed(events: Parameters<NonNullable<ProjectionRunnerOptions['committed']>>[0]): void {
    this.options.committed?.(events);
  }

  deadLettered(): void {
    this.options.observer?.deadLettered(this.group);
  }

  /** What the thread's log asks: the log is this thread's. */
  async answer(method: keyof LogCalls, args: unknown[]): Promise<unknown> {
    const log = this.options.log;
    switch (method) {
      case 'append': {
        const [topic, records] = args as LogCalls['append']['args'];
        return log.append(topic, records);
      }
      case 'endOffsets':
        return log.endOffsets((args as LogCalls['endOffsets']['args'])[0]);
      case 'subscribe': {
        const [id, asked] = args as LogCalls['subscribe']['args'];
        this.#subscriptions.set(id, await this.#subscribe(id, asked));
        return undefined;
      }
      case 'waitFor': {
        const [id, positions, timeoutMs] = args as LogCalls['waitFor']['args'];
        return this.#subscriptions.get(id)?.waitFor(positions, timeoutMs) ?? false;
      }
      case 'unsubscribe': {
        const [id] = args as LogCalls['unsubscribe']['args'];
        await this.#subscriptions.get(id)?.stop();
        this.#subscriptions.delete(id);
        return undefined;
      }
    }
  }

  #subscribe(id: number, asked: SubscriptionAsked): Promise<Subscription> {
    const interval = asked.batchIntervalMs;
    const group = this.group;
    return this.options.log.subscribe({
      group: asked.group,
      topics: asked.topics,
      ...(asked.maxBatch !== undefined ? { maxBatch: asked.maxBatch } : {}),
      ...(interval === undefined ? {} : { batchIntervalMs: typeof interval === 'number' ? interval : (n: number) => interval[Math.min(n, interval.length - 1)]! }),
      ...(asked.waitedBatchIntervalMs !== undefined ? { waitedBatchIntervalMs: asked.waitedBatchIntervalMs } : {}),
      startAt: (topic, partition) => this.thread.request({ type: 'startAt', group, subscription: id, topic, partition }) as Promise<StartAt>,
      handle: async (records) => {
        await this.thread.request({ type: 'batch', group, subscription: id, records });
        this.#applied += records.length;
      },
    });
  }

  async unsubscribeAll(): Promise<void> {
    for (const subscription of this.#subscriptions.values()) await subscription.stop().catch(() => undefined);
    this.#subscriptions.clear();
  }

  /**
   * The thread failed: the batches it was handed fail, its subscriptions stop, everything the
   * store cached is read again (the thread may have committed what it could not tell, its
   * checkpoints too), and a runner here goes on from the checkpoints committed. Not while the
   * runner stops (it is stopped already, as far as anyone waits).
   */
  fallBack(): void {
    if (this.#stopping) return;
    this.#local ??= (async () => {
      await this.unsubscribeAll();
      this.store.allChangedElsewhere();
      return (this.#localRunner = await startProjections(this.options));
    })();
    this.#local.catch((error: unknown) => this.options.logger?.error({ group: this.group, err: error }, `${this.group}: its projections could not go on on the event loop; restart the service`));
  }

  /** The runner that took over, read again after an await (the thread may have failed meanwhile). */
  #fallenBack(): Promise<ProjectionRunner> | null {
    return this.#local;
  }

  #call<M extends keyof RunnerCalls>(method: M, ...args: RunnerCalls[M]['args']): Promise<RunnerCalls[M]['value']> {
    return this.thread.request({ type: 'call', group: this.group, method, args }) as Promise<RunnerCalls[M]['value']>;
  }

  async waitFor(positions: readonly LogPosition[], timeoutMs = READ_MODELS_WAIT_MS): Promise<boolean> {
    if (this.#local) return (await this.#local).waitFor(positions, timeoutMs);
    const started = Date.now();
    const subscriptions = [...this.#subscriptions.values()];
    const reached = subscriptions.length > 0 && (await Promise.all(subscriptions.map((s) => s.waitFor(positions, timeoutMs)))).every(Boolean);
    // The thread failed meanwhile (its subscriptions stopped, and told their waiters no): the runner here goes on waiting.
    const local = this.#fallenBack();
    if (!reached && local) return (await local).waitFor(positions, Math.max(0, timeoutMs - (Date.now() - started)));
    return reached;
  }

  async catchUp(topics: readonly string[], timeoutMs = READ_MODELS_WAIT_MS): Promise<boolean> {
    if (this.#local) return (await this.#local).catchUp(topics, timeoutMs);
    const positions: LogPosition[] = [];
    for (const topic of topics) for (const [partition, end] of await this.options.log.endOffsets(topic)) if (end > 0) positions.push({ topic, partition, offset: end - 1 });
    return positions.length === 0 || this.waitFor(positions, timeoutMs);
  }

  /**
   * Once caught up, the read models are offered again to the stores started later (the embedded
   * profile copies people and groups instead of rebuilding them): the runner that stopped to hand
   * them over withdrew them. As a runner offers them, only without dead letters.
   */
  async caughtUp(): Promise<void> {
    if (this.#local) return (await this.#local).caughtUp();
    await this.#call('caughtUp');
    if (this.options.copies && (await this.deadLetters({ all: true })).length === 0) this.options.copies.offer(this.group, this.options.projections);
  }

  async lag(): Promise<ProjectionLag[]> {
    if (this.#local) return (await this.#local).lag();
    return this.#call('lag');
  }

  async pause(): Promise<void> {
    if (this.#local) return (await this.#local).pause();
    return this.#call('pause');
  }

  resume(): void {
    if (this.#local) {
      this.#local.then((runner) => runner.resume()).catch(() => undefined);
      return;
    }
    this.#call('resume').catch((error: unknown) => this.options.logger?.warn({ group: this.group, err: error }, `${this.group}: resuming the projections in their thread failed`));
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.options.copies?.withdraw();
    try {
      if (this.#local) return await (await this.#local).stop();
      try {
        await this.#call('stop');
      } catch (error) {
        // A thread that failed stopped the group's work with it: its subscriptions are left to stop.
        if (!this.thread.failed) throw error;
      }
      await this.unsubscribeAll();
    } finally {
      this.thread.forget(this.group);
    }
  }

  async deadLetters(options?: { all?: boolean }): Promise<DeadLetter[]> {
    if (this.#local) return (await this.#local).deadLetters(options);
    return this.#call('deadLetters', options ?? {});
  }

  async replay(id: string): Promise<DeadLetter> {
    if (this.#local) return (await this.#local).replay(id);
    return this.#call('replay', id);
  }

  applied(): number {
    return this.#applied + (this.#localRunner?.applied() ?? 0);
  }
}

/** The thread's entry: built beside the bundle (dist/projections-thread.js, from dist/ or dist/chunks/), else the sources through tsx. */
function workerEntry(): URL {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const built of [join(here, 'projections-thread.js'), join(here, '..', 'projections-thread.js')]) if (existsSync(built)) return pathToFileURL(built);
  return new URL('./worker-source.mjs', import.meta.url);
}

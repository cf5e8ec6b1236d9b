// The projections thread (host.ts): runs the projections of the services it is asked to serve,
// each on its own store file, fed the batches the main thread reads from the log.
import { startProjections, type EventLog, type LogPosition, type LogRecord, type ProjectionRunner, type SubscribeOptions, type Subscription } from '@castie/platform';
import { openSqliteDocumentStore, type SqliteDocumentStore } from '@castie/platform/sqlite/sqlite-document-store';
import { parentPort } from 'node:worker_threads';
import { allServices } from '../services.ts';
import { threadLogger } from '../thread-logger.ts';
import { errorData, errorFrom, type Changed, type FromThread, type LogCalls, type RunnerCalls, type SubscriptionAsked, type ToThread } from './messages.ts';

const port = parentPort!;
const tell = (message: FromThread) => port.postMessage(message);
const logger = threadLogger(tell, { thread: 'projections' });

/** One served group: its runner, its store, and what its commits changed that the main thread was not told yet. */
interface Served {
  runner: ProjectionRunner | null;
  store: SqliteDocumentStore;
  changed: Changed[];
  subscriptions: Map<number, SubscribeOptions>;
}
const served = new Map<string, Served>();

/** What a group's commits changed since the last message that carried it. */
function changedOf(group: string): Changed[] {
  const entry = served.get(group);
  if (!entry || entry.changed.length === 0) return [];
  const changed = entry.changed;
  entry.changed = [];
  return changed;
}

let asked = 0;
const asking = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
function ask<M extends keyof LogCalls>(group: string, method: M, ...args: LogCalls[M]['args']): Promise<LogCalls[M]['value']> {
  const id = ++asked;
  return new Promise((resolve, reject) => {
    asking.set(id, { resolve: resolve as (value: unknown) => void, reject });
    tell({ type: 'ask', id, group, method, args });
  });
}

/** Answers a request of the main thread once `work` settles, with what the group's commits changed meanwhile. */
function reply(id: number, group: string, work: () => Promise<unknown>): void {
  work().then(
    (value) => tell({ type: 'reply', id, group, value, changed: changedOf(group) }),
    (error: unknown) => tell({ type: 'reply', id, group, error: errorData(error), changed: changedOf(group) }),
  );
}

let subscriptions = 0;
/** The log as the group's runner sees it: the main thread owns it, reads it and hands over the batches. */
function logOf(group: string, republishedWithin: number | undefined): EventLog {
  return {
    ...(republishedWithin !== undefined ? { republishedWithin } : {}),
    append: (topic, records) => ask(group, 'append', topic, records.map((r) => ({ key: r.key, value: r.value }))),
    endOffsets: (topic) => ask(group, 'endOffsets', topic),
    async subscribe(options): Promise<Subscription> {
      const id = ++subscriptions;
      const { batchIntervalMs } = options;
      const maxBatch = options.maxBatch ?? 500;
      const asked: SubscriptionAsked = {
        group: options.group,
        topics: options.topics,
        maxBatch,
        ...(batchIntervalMs === undefined ? {} : { batchIntervalMs: typeof batchIntervalMs === 'number' ? batchIntervalMs : Array.from({ length: maxBatch + 1 }, (_, n) => batchIntervalMs(n)) }),
        ...(options.waitedBatchIntervalMs !== undefined ? { waitedBatchIntervalMs: options.waitedBatchIntervalMs } : {}),
      };
      const handled = new Map<string, number>();
      served.get(group)!.subscriptions.set(id, {
        ...options,
        handle: async (records) => {
          await options.handle(records);
          const last = records[records.length - 1];
          if (last) handled.set(`${last.topic}:${last.partition}`, last.offset);
        },
      });
      await ask(group, 'subscribe', id, asked);
      return {
        handled: () => handled,
        waitFor: (positions: readonly LogPosition[], timeoutMs: number) => ask(group, 'waitFor', id, [...positions], timeoutMs),
        stop: async () => {
          await ask(group, 'unsubscribe', id);
          served.get(group)?.subscriptions.delete(id);
        },
      };
    },
    close: async () => undefined,
  };
}

async function serve(message: Extract<ToThread, { type: 'serve' }>): Promise<void> {
  const { group } = message;
  if (served.has(group)) throw new Error(`${group} is served already`);
  const definition = allServices().find((m) => m.readModels?.group === group)?.readModels;
  if (!definition) throw new Error(`no service has the read models ${group}`);
  // The main thread's store of the file has it checkpointed in the background. (Checkpoints in
  // this writer's commits, every 4 MB of WAL, made a forecast cost 0.83-0.89 ms of CPU instead of 0.69.)
  const store = openSqliteDocumentStore({ path: message.storePath, checkpointedElsewhere: true, onChanged: (table, ids) => entry.changed.push([table, ids]) });
  const entry: Served = { runner: null, store, changed: [], subscriptions: new Map() };
  served.set(group, entry);
  try {
    entry.runner = await startProjections({
      group,
      log: logOf(group, message.republishedWithin),
      store: entry.store,
      catalogs: definition.catalogs,
      projections: definition.projections(entry.store),
      logger: logger.child({ group }),
      ...(message.attempts !== undefined ? { attempts: message.attempts } : {}),
      ...(message.tellCommitted ? { committed: (events) => tell({ type: 'committed', group, events: [...events], changed: changedOf(group) }) } : {}),
      observer: { deadLettered: () => tell({ type: 'deadLettered', group }) },
    });
  } catch (error) {
    served.delete(group);
    await entry.store.close();
    throw error;
  }
}

async function call(group: string, method: keyof RunnerCalls, args: unknown[]): Promise<unknown> {
  const entry = served.get(group);
  if (!entry?.runner) throw new Error(`${group} is not served here`);
  const runner = entry.runner;
  switch (method) {
    case 'caughtUp':
      return runner.caughtUp();
    case 'lag':
      return runner.lag();
    case 'pause':
      return runner.pause();
    case 'resume':
      return runner.resume();
    case 'deadLetters':
      return runner.deadLetters(...(args as RunnerCalls['deadLetters']['args']));
    case 'replay':
      return runner.replay(...(args as RunnerCalls['replay']['args']));
    case 'stop':
      // Served until stopped: the batch in flight, which the stop waits for, tells what it changed.
      await runner.stop();
      served.delete(group);
      await entry.store.close();
      return undefined;
  }
}

port.on('message', (message: ToThread) => {
  switch (message.type) {
    case 'serve':
      return reply(message.id, message.group, () => serve(message));
    case 'call':
      return reply(message.id, message.group, () => call(message.group, message.method, message.args));
    case 'startAt':
      return reply(message.id, message.group, async () => {
        const options = served.get(message.group)?.subscriptions.get(message.subscription);
        return options?.startAt ? options.startAt(message.topic, message.partition) : 'committed';
      });
    case 'batch':
      return reply(message.id, message.group, async () => {
        const options = served.get(message.group)?.subscriptions.get(message.subscription);
        if (!options) throw new Error(`${message.group}: no subscription ${message.subscription}`);
        await options.handle(message.records as LogRecord[]);
      });
    case 'answer': {
      const pending = asking.get(message.id);
      asking.delete(message.id);
      if (message.error) pending?.reject(errorFrom(message.error));
      else pending?.resolve(message.value);
    }
  }
});

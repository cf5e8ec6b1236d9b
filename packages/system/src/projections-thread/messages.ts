// What the main thread and the projections thread tell each other (host.ts, worker.ts).
import type { DeadLetter } from '@castie/contracts';
import type { AppliedEvent, LogPosition, LogRecord, NewLogRecord, ProjectionLag } from '@castie/platform';
import type { ThreadLogLine } from '../thread-logger.ts';

/** Documents a commit of the thread changed in one table: their ids, or null for the whole table. */
export type Changed = [table: string, ids: readonly string[] | null];

/** A subscription as the thread's runner asks for it; functions do not cross threads, so a batch interval that depends on the last batch's size comes as a table. */
export interface SubscriptionAsked {
  group: string;
  topics: string[];
  maxBatch?: number;
  /** Milliseconds after a batch of `i` records (the last entry: any larger batch). */
  batchIntervalMs?: number | number[];
  waitedBatchIntervalMs?: number;
}

/** An error as it crosses threads; `errorType` is set for a DomainError (the operator's replay). */
export interface ErrorData {
  message: string;
  errorType?: string;
}

/** What the runner of a served group answers for (ProjectionRunner's methods the main thread cannot answer itself). */
export interface RunnerCalls {
  caughtUp: { args: []; value: undefined };
  lag: { args: []; value: ProjectionLag[] };
  pause: { args: []; value: undefined };
  resume: { args: []; value: undefined };
  stop: { args: []; value: undefined };
  deadLetters: { args: [{ all?: boolean }]; value: DeadLetter[] };
  replay: { args: [string]; value: DeadLetter };
}

/** What the thread's log asks the main thread, which owns the log. */
export interface LogCalls {
  append: { args: [string, NewLogRecord[]]; value: LogPosition[] };
  endOffsets: { args: [string]; value: Map<number, number> };
  subscribe: { args: [number, SubscriptionAsked]; value: undefined };
  waitFor: { args: [number, LogPosition[], number]; value: boolean };
  unsubscribe: { args: [number]; value: undefined };
}

export type ToThread =
  /** Run the projections of `group` (a service's ReadModelsOfService) on the store file at `storePath`. */
  | { type: 'serve'; id: number; group: string; storePath: string; tellCommitted: boolean; attempts?: number; republishedWithin?: number }
  | { type: 'call'; id: number; group: string; method: keyof RunnerCalls; args: unknown[] }
  /** Of a subscription of the thread: where to start in a partition, and a batch to handle. */
  | { type: 'startAt'; id: number; group: string; subscription: number; topic: string; partition: number }
  | { type: 'batch'; id: number; group: string; subscription: number; records: LogRecord[] }
  /** The answer to one of the thread's LogCalls. */
  | { type: 'answer'; id: number; value?: unknown; error?: ErrorData };

export type FromThread =
  | ThreadLogLine
  | { type: 'ask'; id: number; group: string; method: keyof LogCalls; args: unknown[] }
  /** The answer to a serve, call, startAt or batch, with what the group's commits changed until then. */
  | { type: 'reply'; id: number; group: string; value?: unknown; error?: ErrorData; changed: Changed[] }
  /** A batch was committed (for the runner's `committed` hook), with what the group's commits changed until then. */
  | { type: 'committed'; group: string; events: AppliedEvent[]; changed: Changed[] }
  | { type: 'deadLettered'; group: string };

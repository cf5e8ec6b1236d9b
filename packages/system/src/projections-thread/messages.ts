// What the main thread and the projections thread tell each other (host.ts, worker.ts).
import { DomainError, type ErrorType } from '@castie/contracts';
import type { AppliedEvent, EventLog, LogRecord, ProjectionRunner, Subscription } from '@castie/platform';
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

/** An error as it crosses threads; `errorType` and `extra` are set for a DomainError (the operator's replay). */
export interface ErrorData {
  message: string;
  errorType?: ErrorType;
  extra?: DomainError['extra'];
}

export const errorData = (error: unknown): ErrorData =>
  error instanceof DomainError ? { message: error.message, errorType: error.errorType, extra: error.extra } : { message: error instanceof Error ? error.message : String(error) };
export const errorFrom = (data: ErrorData): Error => (data.errorType ? new DomainError(data.errorType, data.message, data.extra) : new Error(data.message));

type RunnerMethod = 'caughtUp' | 'lag' | 'pause' | 'resume' | 'stop' | 'deadLetters' | 'replay';
/** What the runner of a served group answers for: the methods of ProjectionRunner the main thread cannot answer itself. */
export type RunnerCalls = { [M in RunnerMethod]: { args: Parameters<ProjectionRunner[M]>; value: Awaited<ReturnType<ProjectionRunner[M]>> } };

/** What the thread's log asks the main thread, which owns the log (subscriptions by the thread's number for them). */
export interface LogCalls {
  append: { args: Parameters<EventLog['append']>; value: Awaited<ReturnType<EventLog['append']>> };
  endOffsets: { args: Parameters<EventLog['endOffsets']>; value: Awaited<ReturnType<EventLog['endOffsets']>> };
  subscribe: { args: [number, SubscriptionAsked]; value: undefined };
  waitFor: { args: [number, ...Parameters<Subscription['waitFor']>]; value: boolean };
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

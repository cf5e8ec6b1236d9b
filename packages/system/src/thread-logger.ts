// A logger for a worker thread: the main thread's logger writes its lines, so the process keeps
// one log stream (rebuild/rebuild-worker.ts, projections-thread/worker.ts).
import type { FastifyBaseLogger } from 'fastify';

/** One line a thread asks the main thread to log. */
export interface ThreadLogLine {
  type: 'log';
  level: 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  msg: string;
}

/** A logger whose lines go to `tell`; errors in fields become their message and stack (they cross threads as plain data). */
export function threadLogger(tell: (line: ThreadLogLine) => void, fixed: Record<string, unknown> = {}): FastifyBaseLogger {
  const line =
    (level: ThreadLogLine['level']) =>
    (fields: unknown, msg?: string): void => {
      if (typeof fields === 'string') return tell({ type: 'log', level, fields: { ...fixed }, msg: fields });
      const plain = fields && typeof fields === 'object' ? Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v instanceof Error ? { message: v.message, stack: v.stack } : v])) : {};
      tell({ type: 'log', level, fields: { ...fixed, ...plain }, msg: msg ?? '' });
    };
  const logger = { info: line('info'), warn: line('warn'), error: line('error'), fatal: line('error'), debug: () => undefined, trace: () => undefined, level: 'info' } as unknown as FastifyBaseLogger;
  (logger as unknown as { child: (bindings: Record<string, unknown>) => FastifyBaseLogger }).child = (bindings) => threadLogger(tell, { ...fixed, ...bindings });
  return logger;
}

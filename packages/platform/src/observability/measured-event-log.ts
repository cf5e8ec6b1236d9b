import type { EventLog } from '../ports/event-log.ts';
import type { Metrics } from './metrics.ts';

/**
 * The event log with its appends timed (`castie_event_log_append_duration_seconds`), whatever the
 * adapter: a decorator, so the port stays thin and no adapter knows about metrics. Failed appends
 * are timed too (outcome `error`): a slow failure is what an operator looks for. Everything else
 * goes to the adapter itself, its own members included (the file log's `read` and `dir`, which
 * the embedded event store needs), so the decorated log stands wherever the adapter did.
 */
export function measuredEventLog<L extends EventLog>(log: L, metrics: Pick<Metrics, 'observeAppend'>): L {
  const append: EventLog['append'] = async (topic, records) => {
    const started = process.hrtime.bigint();
    const seconds = (): number => Number(process.hrtime.bigint() - started) / 1e9;
    try {
      const positions = await log.append(topic, records);
      metrics.observeAppend(topic, 'ok', seconds());
      return positions;
    } catch (error) {
      metrics.observeAppend(topic, 'error', seconds());
      throw error;
    }
  };
  return new Proxy(log, {
    get(target, property) {
      if (property === 'append') return append;
      const value: unknown = Reflect.get(target, property);
      // Methods run on the adapter itself (a class adapter's private fields are not on the proxy).
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

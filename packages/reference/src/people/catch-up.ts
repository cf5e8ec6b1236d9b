import { IDENTITY_TOPIC } from '@castie/contracts';
import type { EventLog, LogPosition, ProjectionRunner } from '@castie/platform';

/**
 * A `catchUp` for People: waits (bounded) until the runner has applied every record the topic
 * (identity by default) holds at the moment of the call. Cheap when the copy is current: one
 * look at the log's end and no wait.
 */
export function catchUpWith(log: EventLog, runner: Pick<ProjectionRunner, 'waitFor'>, options: { topic?: string; timeoutMs?: number } = {}): () => Promise<void> {
  const topic = options.topic ?? IDENTITY_TOPIC;
  const timeoutMs = options.timeoutMs ?? 2000;
  return async () => {
    const positions: LogPosition[] = [];
    for (const [partition, end] of await log.endOffsets(topic)) if (end > 0) positions.push({ topic, partition, offset: end - 1 });
    await runner.waitFor(positions, timeoutMs);
  };
}

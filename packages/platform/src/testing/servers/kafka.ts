import { dockerUnavailable, within } from './docker.ts';

/** A Kafka for tests: its brokers, or none with the reason (shown in skipped test names). */
export interface TestKafka {
  brokers: string[] | null;
  /** How the Kafka was found, or why there is none. */
  reason: string;
  /** Stops the container this helper started; a no-op for KAFKA_BROKERS or when there is none. */
  stop(): Promise<void>;
}

const IMAGE = 'confluentinc/cp-kafka:7.8.0';
let shared: Promise<TestKafka> | null = null;

/**
 * The Kafka that Kafka specs run against, found or started once per test worker: KAFKA_BROKERS
 * (comma-separated) when set; otherwise a single KRaft broker in a container through
 * testcontainers, when a Docker engine is reachable; otherwise none, and specs skip by name with
 * `reason`. Tests isolate themselves with unique topic and group names.
 */
export function testKafka(): Promise<TestKafka> {
  shared ??= findOrStart();
  return shared;
}

async function findOrStart(): Promise<TestKafka> {
  const fromEnv = process.env.KAFKA_BROKERS;
  if (fromEnv) return { brokers: fromEnv.split(',').map((b) => b.trim()).filter(Boolean), reason: 'KAFKA_BROKERS', stop: async () => {} };
  const noDocker = await dockerUnavailable();
  if (noDocker) return { brokers: null, reason: `${noDocker} and KAFKA_BROKERS unset`, stop: async () => {} };
  try {
    // Loaded only now: importing testcontainers starts nothing, but there is no need without Docker.
    const { KafkaContainer } = await import('@testcontainers/kafka');
    const container = await within(new KafkaContainer(IMAGE).withKraft().start(), 240_000, `starting ${IMAGE}`);
    return {
      brokers: [`${container.getHost()}:${container.getMappedPort(9093)}`],
      reason: `${IMAGE} in a container`,
      stop: async () => void (await container.stop()),
    };
  } catch (error) {
    return { brokers: null, reason: `a Docker engine is there but ${IMAGE} did not start: ${(error as Error).message.split('\n')[0]}`, stop: async () => {} };
  }
}

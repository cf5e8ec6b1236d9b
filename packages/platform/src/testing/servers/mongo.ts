import { dockerUnavailable, within } from './docker.ts';

/** A MongoDB for tests: its URL, or none with the reason (shown in skipped test names). */
export interface TestMongo {
  url: string | null;
  /** How the MongoDB was found, or why there is none. */
  reason: string;
  /** Stops the container this helper started; a no-op for MONGO_URL or when there is none. */
  stop(): Promise<void>;
}

const IMAGE = 'mongo:7';
let shared: Promise<TestMongo> | null = null;

/**
 * The MongoDB that MongoDB specs run against, found or started once per test worker: MONGO_URL
 * when set; otherwise a single-node replica set in a container through testcontainers, when a
 * Docker engine is reachable; otherwise none, and specs skip by name with `reason`. Tests isolate
 * themselves with a database per test (`uniqueDatabase`) and drop it afterwards.
 */
export function testMongo(): Promise<TestMongo> {
  shared ??= findOrStart();
  return shared;
}

/** A database name no other test uses (MongoDB allows 63 bytes; no dots or slashes). */
export const uniqueDatabase = (prefix = 'castie_test'): string => `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 10)}`;

async function findOrStart(): Promise<TestMongo> {
  const fromEnv = process.env.MONGO_URL;
  if (fromEnv) return { url: fromEnv, reason: 'MONGO_URL', stop: async () => {} };
  const noDocker = await dockerUnavailable();
  if (noDocker) return { url: null, reason: `${noDocker} and MONGO_URL unset`, stop: async () => {} };
  try {
    const { MongoDBContainer } = await import('@testcontainers/mongodb');
    const container = await within(new MongoDBContainer(IMAGE).start(), 180_000, `starting ${IMAGE}`);
    // The replica set names the container's own host; connect to the mapped port directly.
    return { url: `${container.getConnectionString()}/?directConnection=true`, reason: `${IMAGE} in a container`, stop: async () => void (await container.stop()) };
  } catch (error) {
    return { url: null, reason: `a Docker engine is there but ${IMAGE} did not start: ${(error as Error).message.split('\n')[0]}`, stop: async () => {} };
  }
}

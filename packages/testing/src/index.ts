// Conformance suites and decider helpers. The whole-system harness is `@castie/testing/system`.
export * from './decider/given-when-then.ts';
export * from './conformance/document-store.ts';
export * from './conformance/event-log.ts';
export * from './conformance/event-store.ts';
export * from './conformance/media.ts';
export * from './conformance/cache.ts';
export * from './servers/redis.ts';
export * from './servers/kafka.ts';
export * from './servers/mongo.ts';

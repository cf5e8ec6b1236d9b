// The platform's test kit: a conformance suite per port (every adapter's spec calls it), the
// decider given/when/then helper, and the real servers adapter tests run against.
export * from './given-when-then.ts';
export * from './conformance/document-store.ts';
export * from './conformance/event-log.ts';
export * from './conformance/event-store.ts';
export * from './conformance/media.ts';
export * from './conformance/cache.ts';
export * from './conformance/sorted-sets.ts';
export * from './servers/redis.ts';
export * from './servers/kafka.ts';
export * from './servers/mongo.ts';

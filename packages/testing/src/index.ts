export * from './conformance/document-store.ts';
export * from './conformance/event-log.ts';
export * from './conformance/event-store.ts';
export * from './conformance/media.ts';
export * from './conformance/cache.ts';
export * from './servers/redis.ts';

export * from './conformance/event-log.ts';
export * from './conformance/event-store.ts';

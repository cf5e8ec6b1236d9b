export * from './conformance/event-log.ts';

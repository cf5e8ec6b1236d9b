export * from './ports/event-log.ts';
export * from './ports/event-store.ts';
export * from './ports/document-store.ts';
export * from './ports/media.ts';
export * from './ports/clock.ts';
export * from './ports/mail.ts';
export * from './ports/cache.ts';
export * from './embedded/file-event-log.ts';

export * from './events/envelope.ts';
export * from './events/catalog.ts';
export * from './errors.ts';

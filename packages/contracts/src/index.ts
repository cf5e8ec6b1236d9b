export * from './events/envelope.ts';
export * from './events/catalog.ts';
export * from './events/identity.ts';
export * from './errors.ts';
export * from './api/form.ts';
export * from './api/endpoint.ts';
export * from './api/identity.ts';
export * from './api/all.ts';

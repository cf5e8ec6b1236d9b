export { notificationsModule } from './module.ts';
export { NOTIFICATIONS } from './read-model/projection.ts';

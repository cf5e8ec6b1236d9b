export { notificationsModule } from './module.ts';

import { describe, expect, it } from 'vitest';
import { readClusterConfig } from './cluster-config.ts';

const services = ['identity', 'groups', 'casties', 'social', 'notifications'] as const;
const base = {
  MONGO_URL: 'mongodb://mongo:27017/?replicaSet=rs0',
  REDIS_URL: 'redis://redis:6379',
  SECRET: 's'.repeat(32),
  ADMIN_TOKEN: 'a'.repeat(24),
  PUBLIC_URL: 'https://castie.example.com',
};
const service = { ...base, KAFKA_BROKERS: 'kafka-0:9092, kafka-1:9092', SMTP_URL: 'smtp://mailpit:1025' };
const urls = Object.fromEntries(services.map((s) => [`${s.toUpperCase()}_URL`, `http://${s}:8080`]));

describe('cluster configuration', () => {
  it('reads a service process from the environment, with defaults', () => {
    const config = readClusterConfig('identity', service, services);
    expect(config).toMatchObject({
      role: 'identity',
      PORT: 8080,
      KAFKA_BROKERS: ['kafka-0:9092', 'kafka-1:9092'],
      KAFKA_PARTITIONS: 3,
      kafkaClientId: 'castie-identity',
      MONGO_DB_PREFIX: 'castie_',
      mailFrom: 'Castie <no-reply@castie.example.com>',
      TZ_NAME: 'UTC',
      CLOCK: 'system',
    });
  });

  it('gives the gateway a base URL for every service, and names each one missing', () => {
    expect(readClusterConfig('gateway', { ...base, ...urls }, services).serviceUrls).toEqual(Object.fromEntries(services.map((s) => [s, `http://${s}:8080`])));
    expect(() => readClusterConfig('gateway', { ...base, IDENTITY_URL: 'http://identity:8080' }, services)).toThrow(/GROUPS_URL: required by the gateway.*NOTIFICATIONS_URL/);
  });

  it('refuses to start without the shared secrets, brokers or SMTP where they are needed', () => {
    expect(() => readClusterConfig('groups', { ...service, SECRET: undefined, ADMIN_TOKEN: 'short' }, services)).toThrow(/SECRET.*ADMIN_TOKEN/s);
    expect(() => readClusterConfig('casties', { ...service, KAFKA_BROKERS: '' }, services)).toThrow(/KAFKA_BROKERS: required by the services/);
    expect(() => readClusterConfig('identity', { ...service, SMTP_URL: undefined }, services)).toThrow(/SMTP_URL: required by the identity service/);
    expect(readClusterConfig('groups', { ...service, SMTP_URL: undefined }, services).role).toBe('groups');
  });

  it('refuses an unknown role and CLOCK=manual', () => {
    expect(() => readClusterConfig('billing', service, services)).toThrow(/usage: cluster.js <identity\|groups\|casties\|social\|notifications\|gateway>/);
    expect(() => readClusterConfig(undefined, service, services)).toThrow(/usage/);
    expect(() => readClusterConfig('social', { ...service, CLOCK: 'manual' }, services)).toThrow(/CLOCK=manual is only supported by the embedded profile/);
  });
});

import { argon2idHasher, type PasswordHasher } from '@castie/identity';
import { loggerOptions, ManualClock, type DocumentStore } from '@castie/platform';
import type { ServiceName } from '@castie/contracts';
import { readEmbeddedConfig, startEmbedded, type EmbeddedSystem } from '@castie/system';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ParallelRebuildOptions } from '../rebuild/parallel.ts';

export interface TestResponse {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string | string[] | number | undefined>;
  text: string;
}

export interface TestUser {
  email: string;
  password: string;
  handle: string;
  firstName: string;
  lastName: string;
}

type Fields = Record<string, string | number | boolean | readonly (string | number)[]>;

/** Encodes fields the way the mobile clients send them: x-www-form-urlencoded. */
export function form(fields: Fields): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const item of Array.isArray(v) ? v : [v]) params.append(k, String(item));
  return params.toString();
}

/** The smallest valid PNG (1×1). */
export const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

/** A multipart/form-data body with text fields and at most one file. */
export function multipart(fields: Record<string, string>, file?: { field: string; name: string; bytes: Buffer; type: string }) {
  const boundary = '----castie' + Math.random().toString(16).slice(2);
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  if (file) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.name}"\r\nContent-Type: ${file.type}\r\n\r\n`));
    parts.push(file.bytes, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** A client address of a user's own (10.x.y.z, from their e-mail): each test user has their own device. */
export function addressOf(email: string): string {
  let h = 0;
  for (let i = 0; i < email.length; i++) h = (h * 31 + email.charCodeAt(i)) >>> 0;
  return `10.${(h >>> 16) & 255}.${(h >>> 8) & 255}.${(h & 254) + 1}`;
}

export const basic = (user: Pick<TestUser, 'email' | 'password'>) => `Basic ${Buffer.from(`${user.email}:${user.password}`).toString('base64')}`;

let counter = 0;
/** A fresh, valid user (handles and e-mails unique per test run). */
export function newUser(name = 'user'): TestUser {
  counter += 1;
  const tag = `${name}${counter}${Math.random().toString(36).slice(2, 6)}`.replace(/[^A-Za-z0-9]/g, '');
  return { email: `${tag}@example.com`, password: 'secret1', handle: tag, firstName: 'Test', lastName: `User${counter}` };
}

/**
 * The whole embedded system on a temporary data directory with a frozen manual clock, driven
 * through the gateway with inject (real HTTP semantics, no socket).
 */
export class TestSystem {
  private constructor(
    readonly system: EmbeddedSystem,
    readonly dataDir: string,
    readonly adminToken: string,
    readonly clock: ManualClock,
  ) {}

  static async start(
    options: { dataDir?: string; env?: Record<string, string>; now?: Date; checkResponses?: boolean; passwords?: PasswordHasher; wrapDocuments?: (service: ServiceName, store: DocumentStore) => DocumentStore; logger?: FastifyBaseLogger; parallelRebuild?: ParallelRebuildOptions } = {},
  ): Promise<TestSystem> {
    const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'castie-test-')));
    const config = readEmbeddedConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ADMIN_TOKEN: 'test-admin-token-0123456789', SECRET: 'test-secret-0123456789abcdef', ...options.env });
    const clock = new ManualClock(options.now ?? new Date('2026-03-01T12:00:00Z'));
    // Cheap argon2id parameters: tests check behaviour, not the hash's cost.
    const system = await startEmbedded(config, {
      clock,
      passwords: options.passwords ?? argon2idHasher({ memoryCost: 1024, timeCost: 1 }),
      checkResponses: options.checkResponses ?? true,
      ...(options.wrapDocuments ? { wrapDocuments: options.wrapDocuments } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.parallelRebuild ? { parallelRebuild: options.parallelRebuild } : {}),
    });
    return new TestSystem(system, dataDir, config.adminToken, clock);
  }

  /**
   * One request through the gateway. `from` is the client address (default: the user's own, as
   * every test user comes from their own device, else 127.0.0.1): abuse limits count per address.
   */
  async request(method: string, url: string, options: { user?: Pick<TestUser, 'email' | 'password'>; form?: Fields; json?: unknown; headers?: Record<string, string>; payload?: Buffer | string; from?: string } = {}): Promise<TestResponse> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.user) headers.authorization = basic(options.user);
    let payload: string | Buffer | undefined = options.payload;
    if (options.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      payload = form(options.form);
    } else if (options.json !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(options.json);
    }
    const remoteAddress = options.from ?? (options.user ? addressOf(options.user.email) : '127.0.0.1');
    const res = await this.system.gateway.inject({ method: method as 'GET', url, headers, remoteAddress, ...(payload === undefined ? {} : { payload }) });
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(res.payload) as Record<string, unknown>;
    } catch {
      body = {};
    }
    return { status: res.statusCode, body, headers: res.headers, text: res.payload };
  }

  get(url: string, user?: TestUser) {
    return this.request('GET', url, user ? { user } : {});
  }

  post(url: string, fields: Fields = {}, user?: Pick<TestUser, 'email' | 'password'>) {
    return this.request('POST', url, { form: fields, ...(user ? { user } : {}) });
  }

  /** A POST without credentials from a user's own address (sign-up steps). */
  postAs(user: Pick<TestUser, 'email'>, url: string, fields: Fields) {
    return this.request('POST', url, { form: fields, from: addressOf(user.email) });
  }

  /**
   * Runs `fn` while a service's read models are held behind the log (ProjectionRunner.pause), to
   * see what is answered before they apply a write: `resume` lets them go on, and they go on in
   * any case once `fn` ends.
   */
  async holdingReadModels<T>(service: ServiceName, fn: (resume: () => void) => Promise<T>): Promise<T> {
    const readModels = this.system.services.get(service)?.readModels;
    if (!readModels) throw new Error(`${service} has no read models`);
    await readModels.pause();
    let resumed = false;
    const resume = () => {
      if (resumed) return;
      resumed = true;
      readModels.resume();
    };
    try {
      return await fn(resume);
    } finally {
      resume();
    }
  }

  /** Runs the four sign-up steps; the user can then sign in. */
  async signUp(user: TestUser = newUser()): Promise<TestUser> {
    const steps = [
      await this.postAs(user, '/api/signup/email/', { email: user.email }),
      await this.postAs(user, '/api/signup/password/', { email: user.email, password: user.password }),
      await this.postAs(user, '/api/signup/handle/', { email: user.email, handle: user.handle, first_name: user.firstName, last_name: user.lastName }),
      await this.postAs(user, '/api/signup/picture/', { email: user.email, handle: user.handle }),
    ];
    const failed = steps.find((s) => s.status !== 200);
    if (failed) throw new Error(`sign-up of ${user.email} failed: ${failed.text}`);
    return user;
  }

  admin(method: string, url: string, json: unknown = {}) {
    return this.request(method, url, { json, headers: { authorization: `Bearer ${this.adminToken}` } });
  }

  #stopped: Promise<void> | null = null;

  /** Stops the system once (its data stays). */
  stop(): Promise<void> {
    this.#stopped ??= this.system.close();
    return this.#stopped;
  }

  async close(options: { keepData?: boolean } = {}): Promise<void> {
    await this.stop();
    if (!options.keepData) await rm(this.dataDir, { recursive: true, force: true });
  }
}

/**
 * Retries an assertion until it passes or the time is up (then its last failure is thrown).
 * For what other users see: their copies catch up in milliseconds, not at once (rule 6 covers
 * only one's own writes).
 */
export async function eventually<T>(assertion: () => Promise<T>, timeoutMs = 3000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await assertion();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

export interface CapturedLog {
  logger: FastifyBaseLogger;
  /** Every line written so far, as written (JSON text). */
  text(): string;
  /** Every line written so far, parsed. */
  lines(): Record<string, unknown>[];
}

/** A pino logger configured as production's, writing into memory: tests read what operators would. */
export function capturedLogger(level = 'info'): CapturedLog {
  const chunks: string[] = [];
  const logger = pino(loggerOptions({ level }), { write: (chunk: string) => void chunks.push(chunk) }) as unknown as FastifyBaseLogger;
  const text = () => chunks.join('');
  return {
    logger,
    text,
    lines: () =>
      text()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

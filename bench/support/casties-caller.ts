// What the in-service benchmarks share: the embedded system of any checkout of the code (`root`)
// on a data directory, and GETs straight into its casties service as one seeded user, the way the
// gateway makes them (no gateway, no credentials check), timed request by request.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Contracts from '../../packages/contracts/src/index.ts';
import type * as System from '../../packages/system/src/index.ts';

export interface CastiesCaller {
  /** From the call to the system's start until it was ready, in ms. */
  startMs: number;
  /** The answer's text to a GET (200 or it throws). */
  text(url: string): Promise<string>;
  close(): Promise<void>;
}

export async function castiesCaller(root: string, dataDir: string, handle: string, password: string): Promise<CastiesCaller> {
  const system = (await import(pathToFileURL(join(root, 'packages/system/src/index.ts')).href)) as typeof System;
  const contracts = (await import(pathToFileURL(join(root, 'packages/contracts/src/index.ts')).href)) as typeof Contracts;
  const started = performance.now();
  const running = await system.startEmbedded(system.readEmbeddedConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ADMIN_TOKEN: 'bench-admin-token-0123456789', SECRET: 'bench-secret-0123456789abcdef', USER_REQUESTS_PER_MINUTE: '1000000000' }));
  const startMs = performance.now() - started;
  const basic = `Basic ${Buffer.from(`${handle}@example.com:${password}`).toString('base64')}`;
  const profile = await running.gateway.inject({ method: 'GET', url: `/api/profile/${handle}/stats/?ids_only=True`, headers: { authorization: basic } });
  if (profile.statusCode !== 200) throw new Error(`profile of ${handle}: ${profile.payload.slice(0, 300)}`);
  const userId = (JSON.parse(profile.payload) as { profileInfo: { user_uuid: string } }).profileInfo.user_uuid;
  const casties = running.services.get('casties')!.app;
  const headers = { [contracts.internalHeaders.userId]: userId, [contracts.internalHeaders.handle]: handle, [contracts.internalHeaders.email]: `${handle}@example.com` };
  // As the gateway calls it: through the in-process client (older checkouts had none: inject).
  const client = (running as { clients?: typeof running.clients }).clients?.casties;
  return {
    startMs,
    async text(url) {
      if (client) {
        const res = await client.request({ method: 'GET', url, headers });
        const body = typeof res.body === 'string' ? res.body : res.body.toString('utf8');
        if (res.statusCode !== 200) throw new Error(`${url}: ${body.slice(0, 300)}`);
        return body;
      }
      const res = await casties.inject({ method: 'GET', url, headers });
      if (res.statusCode !== 200) throw new Error(`${url}: ${res.payload.slice(0, 300)}`);
      return res.payload;
    },
    close: () => running.close(),
  };
}

/** Times `count` calls one after another: p50, p99 and mean in ms. */
export async function timed(count: number, call: () => Promise<unknown>): Promise<{ p50: number; p99: number; mean: number }> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await call();
    times.push(performance.now() - t);
    // Between requests the event loop turns, as it does in a server between sockets' reads: an
    // in-memory answer resolves in microtasks alone, and a loop that never yields would pile up
    // every request's setImmediate callbacks (and the responses they hold) until it ends.
    await new Promise((resolve) => setImmediate(resolve));
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  return { p50: at(0.5), p99: at(0.99), mean: times.reduce((a, b) => a + b, 0) / times.length };
}

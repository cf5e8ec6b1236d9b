// Run by the read-side benchmark in a child process, from any checkout of the code (argv[2] is
// that checkout): starts the embedded system on a data directory and times GET /api/home/following/
// (or the path given after the count)
// for one user straight into the casties service (no gateway, no credentials check), as the
// embedded gateway calls it. Prints one JSON line: { p50, p99, mean, requests, bytes }.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Contracts from '../../packages/contracts/src/index.ts';
import type * as System from '../../packages/system/src/index.ts';

const [root, dataDir, handle, password, countArg, path = '/api/home/following/'] = process.argv.slice(2) as [string, string, string, string, string, string?];
const count = Number(countArg ?? 500);
const system = (await import(pathToFileURL(join(root, 'packages/system/src/index.ts')).href)) as typeof System;
const contracts = (await import(pathToFileURL(join(root, 'packages/contracts/src/index.ts')).href)) as typeof Contracts;

const running = await system.startEmbedded(system.readEmbeddedConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', ADMIN_TOKEN: 'bench-admin-token-0123456789', SECRET: 'bench-secret-0123456789abcdef', USER_REQUESTS_PER_MINUTE: '1000000000' }));
const basic = `Basic ${Buffer.from(`${handle}@example.com:${password}`).toString('base64')}`;
const profile = await running.gateway.inject({ method: 'GET', url: `/api/profile/${handle}/stats/?ids_only=True`, headers: { authorization: basic } });
if (profile.statusCode !== 200) throw new Error(`profile of ${handle}: ${profile.payload.slice(0, 300)}`);
const userId = (JSON.parse(profile.payload) as { profileInfo: { user_uuid: string } }).profileInfo.user_uuid;
const casties = running.services.get('casties')!.app;
const headers = { [contracts.internalHeaders.userId]: userId, [contracts.internalHeaders.handle]: handle, [contracts.internalHeaders.email]: `${handle}@example.com` };
// As the gateway calls it: through the in-process client (older checkouts had none: inject).
const client = (running as { clients?: typeof running.clients }).clients?.casties;
const once = async () => {
  if (client) {
    const res = await client.request({ method: 'GET', url: path, headers });
    const text = typeof res.body === 'string' ? res.body : res.body.toString('utf8');
    if (res.statusCode !== 200) throw new Error(text.slice(0, 300));
    return Buffer.byteLength(text);
  }
  const res = await casties.inject({ method: 'GET', url: path, headers });
  if (res.statusCode !== 200) throw new Error(res.payload.slice(0, 300));
  return res.rawPayload.length;
};
let bytes = 0;
for (let i = 0; i < 50; i++) bytes = await once();
const times: number[] = [];
for (let i = 0; i < count; i++) {
  const t = performance.now();
  await once();
  times.push(performance.now() - t);
  // Between requests the event loop turns, as it does in a server between sockets' reads: an
  // in-memory answer resolves in microtasks alone, and a loop that never yields would pile up
  // every request's setImmediate callbacks (and the responses they hold) until it ends.
  await new Promise((resolve) => setImmediate(resolve));
}
times.sort((a, b) => a - b);
const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
process.stdout.write(`${JSON.stringify({ p50: at(0.5), p99: at(0.99), mean: times.reduce((a, b) => a + b, 0) / times.length, requests: count, bytes })}\n`);
await running.close();

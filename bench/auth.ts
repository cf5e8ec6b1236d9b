// What authenticating every request costs: the same GET /api/preferences/ through the gateway
// with HTTP Basic (verified-credential cache warm), straight to the identity service with the
// gateway's trusted headers (no authentication), and the first check of a password (argon2id).
// Side by side in one run: `npm run bench -- auth`. One user sends every request, so the per-user
// request budget (an abuse limit, USER_REQUESTS_PER_MINUTE) is set out of the way: with the
// default of 1,200 a minute the gateway refused the first timed run with 429.
import { internalHeaders } from '../packages/contracts/src/index.ts';
import { readEmbeddedConfig, startEmbedded } from '../packages/system/src/index.ts';
import { argon2idHasher } from '../services/identity/src/index.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dataDir = await mkdtemp(join(tmpdir(), 'castie-bench-auth-'));
const system = await startEmbedded(readEmbeddedConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', USER_REQUESTS_PER_MINUTE: '1000000000' }));
const gw = system.gateway;
const form = (f: Record<string, string>) => ({ payload: new URLSearchParams(f).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
const email = 'bench@example.com';
for (const [url, fields] of [
  ['/api/signup/password/', { email, password: 'secret1' }],
  ['/api/signup/handle/', { email, handle: 'bench', first_name: 'Bench', last_name: 'Mark' }],
  ['/api/signup/picture/', { email, handle: 'bench' }],
] as const) {
  const res = await gw.inject({ method: 'POST', url, ...form(fields) });
  if (res.statusCode !== 200) throw new Error(res.payload);
}
const basic = `Basic ${Buffer.from(`${email}:secret1`).toString('base64')}`;
const identity = system.services.get('identity')!.app;
const me = (JSON.parse((await identity.inject({ method: 'POST', url: '/internal/authenticate', payload: { email, password: 'secret1' } })).payload) as { user: { userId: string } }).user;

async function measure(name: string, n: number, concurrency: number, call: () => Promise<number>) {
  for (let i = 0; i < 200; i++) await call(); // warm up
  const start = process.hrtime.bigint();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < n) {
        const status = await call();
        if (status !== 200) throw new Error(`${name} answered ${status}`);
      }
    }),
  );
  const ns = Number(process.hrtime.bigint() - start);
  return { name, n, usPerRequest: ns / n / 1000, perSecond: Math.round(n / (ns / 1e9)) };
}

const viaGateway = () => gw.inject({ method: 'GET', url: '/api/preferences/', headers: { authorization: basic } }).then((r) => r.statusCode);
const direct = () =>
  identity.inject({ method: 'GET', url: '/api/preferences/', headers: { [internalHeaders.userId]: me.userId, [internalHeaders.handle]: 'bench', [internalHeaders.email]: email } }).then((r) => r.statusCode);
const hasher = argon2idHasher();
const hash = await hasher.hash('secret1');
const argon = () => hasher.verify(hash, 'secret1').then((ok) => (ok ? 200 : 401));

const rows = [];
for (let round = 0; round < 2; round++) {
  rows.push(await measure('identity direct (no auth)', 20_000, 1, direct));
  rows.push(await measure('gateway + Basic (cached)', 20_000, 1, viaGateway));
}
rows.push(await measure('gateway + Basic, 16 concurrent', 20_000, 16, viaGateway));
rows.push(await measure('argon2id verify (cache miss)', 50, 1, argon));
console.table(rows.map((r) => ({ ...r, usPerRequest: r.usPerRequest.toFixed(1) })));
const d = rows.filter((r) => r.name.startsWith('identity direct')).at(-1)!;
const g = rows.filter((r) => r.name.startsWith('gateway + Basic (cached)')).at(-1)!;
const a = rows.at(-1)!;
console.log(`gateway with cached authentication costs ${(g.usPerRequest - d.usPerRequest).toFixed(1)} µs more per request than the bare service call (×${(g.usPerRequest / d.usPerRequest).toFixed(2)}); an argon2id check costs ${(a.usPerRequest / 1000).toFixed(1)} ms, ×${Math.round(a.usPerRequest / (g.usPerRequest - d.usPerRequest))} the cached overhead`);
await system.close();
await rm(dataDir, { recursive: true, force: true });

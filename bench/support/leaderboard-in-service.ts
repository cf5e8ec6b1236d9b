// Run by the leaderboard benchmark in a child process, from any checkout of the code (argv[2] is
// that checkout): starts the embedded system on a data directory and times, straight into the
// casties service (no gateway: its in-process client, as the gateway calls it) for one user: the overall
// leaderboard, the leaderboard of the user's largest group, and that group's page without its
// Casties (the requester's ranking / totalRanked). Prints one JSON line with p50/p99 per request,
// the start time, and what each board showed (to check both checkouts rank alike).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Contracts from '../../packages/contracts/src/index.ts';
import type * as System from '../../packages/system/src/index.ts';

const [root, dataDir, handle, password, countArg] = process.argv.slice(2) as [string, string, string, string, string];
const count = Number(countArg ?? 1000);
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
/** The answer's text (the timed part: the caller's JSON.parse is not the service's cost). */
const text = async (url: string): Promise<string> => {
  if (client) {
    const res = await client.request({ method: 'GET', url, headers });
    const body = typeof res.body === 'string' ? res.body : res.body.toString('utf8');
    if (res.statusCode !== 200) throw new Error(`${url}: ${body.slice(0, 300)}`);
    return body;
  }
  const res = await casties.inject({ method: 'GET', url, headers });
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.payload.slice(0, 300)}`);
  return res.payload;
};
const get = async (url: string) => JSON.parse(await text(url)) as Record<string, unknown>;

// The user's largest group: the longest group board.
const followed = ((await get('/api/leaderboard/?limit=1')).leaderboard_groups as { slug: string }[]).map((g) => g.slug);
const sizes = await Promise.all(followed.map(async (slug) => [slug, ((await get(`/api/groups/${slug}/?casties=False`)).followersCount as number) ?? 0] as const));
const [slug, followers] = sizes.sort((a, b) => b[1] - a[1])[0]!;

const requests = { overall: '/api/leaderboard/?limit=150', group: `/api/leaderboard/${slug}/?limit=150`, groupPage: `/api/groups/${slug}/?casties=False` };
const handles = (body: Record<string, unknown>) => (body.leaderboard_profiles as { handle: string; xp?: number; level?: number }[]).map((p) => `${p.handle}:${p.xp ?? p.level}`);
const shown = { overall: handles(await get(requests.overall)), group: handles(await get(requests.group)), ranking: await get(requests.groupPage).then((b) => ({ ranking: b.ranking, totalRanked: b.totalRanked })) };

const timings: Record<string, { p50: number; p99: number }> = {};
for (const [name, url] of Object.entries(requests)) {
  for (let i = 0; i < Math.min(100, Math.ceil(count / 5)); i++) await get(url);
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await text(url);
    times.push(performance.now() - t);
    // The event loop turns between requests, as in a server (see in-service.ts).
    await new Promise((resolve) => setImmediate(resolve));
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!;
  timings[name] = { p50: at(0.5), p99: at(0.99) };
}
process.stdout.write(`${JSON.stringify({ startMs, slug, followers, timings, shown })}\n`);
await running.close();

// Run by the leaderboard benchmark in a child process, from any checkout of the code (argv[2] is
// that checkout): starts the embedded system on a data directory and times, straight into the
// casties service (no gateway: its in-process client, as the gateway calls it) for one user: the overall
// leaderboard, the leaderboard of the user's largest group, and that group's page without its
// Casties (the requester's ranking / totalRanked). Prints one JSON line with p50/p99 per request,
// the start time, and what each board showed (to check both checkouts rank alike).
import { castiesCaller, timed } from './casties-caller.ts';

const [root, dataDir, handle, password, countArg] = process.argv.slice(2) as [string, string, string, string, string];
const count = Number(countArg ?? 1000);
const casties = await castiesCaller(root, dataDir, handle, password);
const { startMs } = casties;
const get = async (url: string) => JSON.parse(await casties.text(url)) as Record<string, unknown>;

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
  // The answer's text is what is timed: the caller's JSON.parse is not the service's cost.
  const { p50, p99 } = await timed(count, () => casties.text(url));
  timings[name] = { p50, p99 };
}
process.stdout.write(`${JSON.stringify({ startMs, slug, followers, timings, shown })}\n`);
await casties.close();

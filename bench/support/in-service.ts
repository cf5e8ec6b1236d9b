// Run by the read-side and home-feed benchmarks in a child process, from any checkout of the code
// (argv[2] is that checkout): starts the embedded system on a data directory and times GET
// /api/home/following/ (or the path given after the count) for one user straight into the
// casties service (no gateway, no credentials check), as the embedded gateway calls it. Prints
// one JSON line: { p50, p99, mean, requests, bytes }.
import { castiesCaller, timed } from './casties-caller.ts';

const [root, dataDir, handle, password, countArg, path = '/api/home/following/'] = process.argv.slice(2) as [string, string, string, string, string, string?];
const count = Number(countArg ?? 500);
const casties = await castiesCaller(root, dataDir, handle, password);
let bytes = 0;
for (let i = 0; i < 50; i++) bytes = Buffer.byteLength(await casties.text(path));
const times = await timed(count, () => casties.text(path));
process.stdout.write(`${JSON.stringify({ ...times, requests: count, bytes })}\n`);
await casties.close();

// Live notification counts (issue 13): how fast a change reaches open Server-Sent Event streams,
// and what an open stream costs. The embedded system listens on a socket; USERS people sign up
// and each opens STREAMS_PER_USER streams (1,000 in all by default); then ROUNDS friend requests
// (CONCURRENCY at a time) each change one person's counts, and every one of that person's streams
// must receive the new counts. Latency runs from the start of the write request to the event's
// arrival on a stream (it includes the write itself, the log, the notifications projection, the
// pub/sub hop and the counts read).
// Clients run in this process too, so the RSS per stream is an upper bound (server and client side).
// Run: npm run bench -- live [streams=1000]
import { availableParallelism, loadavg } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { basic, TestSystem, type TestUser } from '../packages/system/src/testing/harness.ts';
import { SseClient } from '../packages/system/src/testing/sse.ts';

const STREAMS = Number(process.argv[2] ?? 1000);
const STREAMS_PER_USER = 4;
const USERS = Math.ceil(STREAMS / STREAMS_PER_USER);
// Each pair once, and never both ways (a request back would be a different change).
const ROUNDS = Math.min(400, USERS * (Math.floor(USERS / 2) - 1));
const CONCURRENCY = 4;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const settledRss = async () => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 50));
  }
  return process.memoryUsage().rss;
};

// As in production: responses are not re-validated against their schemas (tests do that).
const sys = await TestSystem.start({ checkResponses: false, env: { USER_REQUESTS_PER_MINUTE: '1000000', LIVE_STREAMS_PER_USER: String(STREAMS_PER_USER) } });
const base = await sys.system.gateway.listen({ port: 0, host: '127.0.0.1' });
const t0 = performance.now();
const users: TestUser[] = [];
for (let i = 0; i < USERS; i++) users.push(await sys.signUp());
const signUpMs = performance.now() - t0;

const rssBefore = await settledRss();
const streams = new Map<string, SseClient[]>();
const waiting = new Map<string, { target: number; start: number; acked: number | null; left: number; done: () => void }>();
const latencies: number[] = [];
/** Arrival after the write's answer (0 when the event came first): what the pub/sub path adds. */
const afterAck: { w: { acked: number | null }; at: number }[] = [];
const writes: number[] = [];
const opened = performance.now();
for (const user of users) {
  const own: SseClient[] = [];
  for (let s = 0; s < STREAMS_PER_USER && streams.size * STREAMS_PER_USER + own.length < STREAMS; s++) {
    const client = await SseClient.open(`${base}/api/notifications/stream/`, { authorization: basic(user) });
    if (client.status !== 200) throw new Error(`stream refused: ${client.status} ${client.body}`);
    await client.waitForEvents(1);
    let reached = false;
    client.onEvent = (event) => {
      const w = waiting.get(user.email);
      const counts = JSON.parse(event.data) as { number_notifications: number };
      if (!w || reached || counts.number_notifications < w.target) return;
      reached = true;
      latencies.push(performance.now() - w.start);
      afterAck.push({ w, at: performance.now() });
      if (--w.left === 0) w.done();
    };
    own.push(Object.assign(client, { resetReached: () => (reached = false) }));
  }
  streams.set(user.email, own);
}
const openMs = performance.now() - opened;
const rssOpen = await settledRss();
const open = [...streams.values()].reduce((n, s) => n + s.length, 0);

// Friend requests: round i sends from one person to another, each pair once.
const received = new Map<string, number>();
let next = 0;
const changesStart = performance.now();
await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (next < ROUNDS) {
      const i = next++;
      const to = users[i % USERS]!;
      const from = users[(i + 1 + Math.floor(i / USERS)) % USERS]!;
      // One change in flight per person, so each stream's next counts are this change's.
      if ([...waiting.keys()].includes(to.email)) {
        await new Promise((r) => setTimeout(r, 1));
        next--;
        continue;
      }
      const target = (received.get(to.email) ?? 0) + 1;
      received.set(to.email, target);
      const clients = streams.get(to.email)!;
      for (const c of clients) (c as SseClient & { resetReached(): void }).resetReached();
      const arrived = new Promise<void>((done) => waiting.set(to.email, { target, start: performance.now(), acked: null, left: clients.length, done }));
      const started = performance.now();
      const res = await sys.post(`/api/add-frodad/${to.handle}/`, {}, from);
      writes.push(performance.now() - started);
      waiting.get(to.email)!.acked = performance.now();
      if (res.status !== 200) throw new Error(`friend request: ${res.text}`);
      const timeout = setTimeout(() => {
        throw new Error(`counts of ${to.handle} never arrived on every stream`);
      }, 10_000);
      await arrived;
      clearTimeout(timeout);
      waiting.delete(to.email);
    }
  }),
);
const changesSeconds = (performance.now() - changesStart) / 1000;

latencies.sort((a, b) => a - b);
const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
const ms = (n: number) => `${n.toFixed(1)} ms`;
console.log(`live notification counts: ${open} open streams (${USERS} people × ${STREAMS_PER_USER}), embedded profile, one process`);
console.log(`  sign-up ${(signUpMs / 1000).toFixed(1)} s; streams opened (first counts received) in ${(openMs / 1000).toFixed(1)} s`);
console.log(`  ${ROUNDS} changes (${CONCURRENCY} at a time, ${(ROUNDS / changesSeconds).toFixed(0)}/s), ${latencies.length} deliveries`);
console.log(`  delivery latency (write start → event on a stream): p50 ${ms(at(0.5))}, p90 ${ms(at(0.9))}, p99 ${ms(at(0.99))}, max ${ms(latencies.at(-1)!)}`);
writes.sort((a, b) => a - b);
const sinceAck = afterAck.map(({ w, at: t }) => Math.max(0, t - (w.acked ?? t))).sort((a, b) => a - b);
const q = (list: number[], p: number) => list[Math.min(list.length - 1, Math.floor(p * list.length))]!;
console.log(`  the write itself (POST /api/add-frodad/ answered): p50 ${ms(q(writes, 0.5))}, p99 ${ms(q(writes, 0.99))}`);
console.log(`  after the write's answer (0 when the event came first): p50 ${ms(q(sinceAck, 0.5))}, p99 ${ms(q(sinceAck, 0.99))}`);
console.log(`  RSS: ${(rssBefore / 2 ** 20).toFixed(0)} MiB before, ${(rssOpen / 2 ** 20).toFixed(0)} MiB with the streams open: ${((rssOpen - rssBefore) / open / 1024).toFixed(1)} KiB per open stream (server and client side)`);
console.log(`  machine: ${availableParallelism()} cores, load average ${loadavg()[0]!.toFixed(1)} (other work on the machine shows up in every figure)`);
console.log(`  goal: p99 < 100 ms — ${at(0.99) < 100 ? 'met' : 'NOT met'}`);

for (const list of streams.values()) for (const c of list) c.close();
await sys.close();

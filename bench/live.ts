// Live notification counts (issue 13): how fast a change reaches open Server-Sent Event streams,
// and what an open stream costs the server. The embedded system listens on a socket; USERS people
// sign up and a child process (the clients, so their memory is not the server's) opens
// STREAMS_PER_USER streams for each (1,000 in all by default). Then ROUNDS friend requests
// (CONCURRENCY at a time) each change one person's counts, and every one of that person's streams
// must receive the new counts. Latency runs from the start of the write request to the event's
// arrival at the client (it includes the write itself, the log, the notifications projection, the
// pub/sub hop and the counts read); timestamps are wall-clock in both processes.
// Run: npm run bench -- live [streams=1000]
import { fork } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { basic, TestSystem, type TestUser } from '../packages/system/src/testing/harness.ts';
import { SseClient } from '../packages/system/src/testing/sse.ts';

const STREAMS_PER_USER = 4;
const CONCURRENCY = 4;
/** The first changes run while code paths are cold (JIT, prepared statements): reported apart, not counted. */
const WARMUP = 20;
const wallNow = () => performance.timeOrigin + performance.now();

/** Messages between the server process and the clients' process. */
type ToClients = { type: 'open'; base: string; users: Pick<TestUser, 'email' | 'password'>[]; streams: number } | { type: 'close' };
type FromClients = { type: 'opened'; open: number } | { type: 'counts'; email: string; stream: number; n: number; at: number } | { type: 'failed'; reason: string };

if (process.argv[2] === '--clients') {
  // The clients' process: opens the streams and reports each counts event with its arrival time.
  const send = (m: FromClients) => process.send!(m);
  const clients: SseClient[] = [];
  process.on('message', async (m: ToClients) => {
    if (m.type === 'close') {
      for (const c of clients) c.close();
      process.exit(0);
    }
    try {
      let open = 0;
      for (const user of m.users) {
        for (let s = 0; s < STREAMS_PER_USER && open < m.streams; s++, open++) {
          const client = await SseClient.open(`${m.base}/api/notifications/stream/`, { authorization: basic(user) });
          if (client.status !== 200) throw new Error(`stream refused: ${client.status} ${client.body}`);
          await client.waitForEvents(1);
          client.onEvent = (event) => send({ type: 'counts', email: user.email, stream: s, n: (JSON.parse(event.data) as { number_notifications: number }).number_notifications, at: wallNow() });
          clients.push(client);
        }
      }
      send({ type: 'opened', open });
    } catch (error) {
      send({ type: 'failed', reason: (error as Error).message });
    }
  });
} else {
  const STREAMS = Number(process.argv[2] ?? 1000);
  const USERS = Math.ceil(STREAMS / STREAMS_PER_USER);
  // Each pair once, and never both ways (a request back would be a different change).
  const ROUNDS = Math.min(400, USERS * (Math.floor(USERS / 2) - 1));

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

  const child = fork(new URL(import.meta.url).pathname, ['--clients'], { stdio: 'inherit' });
  const waiting = new Map<string, { target: number; start: number; acked: number | null; warm: boolean; reached: Set<number>; done: () => void }>();
  const coldLatencies: number[] = [];
  const latencies: number[] = [];
  /** Arrival after the write's answer (0 when the event came first): what the way back adds. */
  const sinceAck: number[] = [];
  const writes: number[] = [];
  let opened: (open: number) => void = () => {};
  child.on('message', (m: FromClients) => {
    if (m.type === 'opened') return opened(m.open);
    if (m.type === 'failed') throw new Error(`clients: ${m.reason}`);
    const w = waiting.get(m.email);
    if (!w || m.n < w.target || w.reached.has(m.stream)) return;
    w.reached.add(m.stream);
    if (!w.warm) coldLatencies.push(m.at - w.start);
    else {
      latencies.push(m.at - w.start);
      sinceAck.push(w.acked === null ? 0 : Math.max(0, m.at - w.acked));
    }
    if (w.reached.size === STREAMS_PER_USER) w.done();
  });

  const rssBefore = await settledRss();
  const openStart = performance.now();
  const open = await new Promise<number>((resolve) => {
    opened = resolve;
    child.send({ type: 'open', base, users: users.map(({ email, password }) => ({ email, password })), streams: STREAMS } satisfies ToClients);
  });
  const openMs = performance.now() - openStart;
  const rssOpen = await settledRss();

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
        if (waiting.has(to.email)) {
          await new Promise((r) => setTimeout(r, 1));
          next--;
          continue;
        }
        const target = (received.get(to.email) ?? 0) + 1;
        received.set(to.email, target);
        const arrived = new Promise<void>((done) => waiting.set(to.email, { target, start: wallNow(), acked: null, warm: i >= WARMUP, reached: new Set(), done }));
        const started = performance.now();
        const res = await sys.post(`/api/add-frodad/${to.handle}/`, {}, from);
        if (res.status !== 200) throw new Error(`friend request: ${res.text}`);
        if (i >= WARMUP) writes.push(performance.now() - started);
        waiting.get(to.email)!.acked = wallNow();
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

  const q = (list: number[], p: number) => [...list].sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor(p * list.length))]!;
  const ms = (n: number) => `${n.toFixed(1)} ms`;
  const p99 = q(latencies, 0.99);
  console.log(`live notification counts: ${open} open streams (${USERS} people × ${STREAMS_PER_USER}), embedded profile; clients in a child process`);
  console.log(`  sign-up ${(signUpMs / 1000).toFixed(1)} s; streams opened (first counts received) in ${(openMs / 1000).toFixed(1)} s`);
  console.log(`  ${ROUNDS} changes (${CONCURRENCY} at a time, ${(ROUNDS / changesSeconds).toFixed(0)}/s), ${latencies.length} deliveries counted`);
  console.log(`  warm-up, not counted: the first ${WARMUP} changes (${coldLatencies.length} deliveries), p50 ${q(coldLatencies, 0.5).toFixed(1)} ms, max ${q(coldLatencies, 1).toFixed(1)} ms`);
  console.log(`  delivery latency (write start → event at the client): p50 ${ms(q(latencies, 0.5))}, p90 ${ms(q(latencies, 0.9))}, p99 ${ms(p99)}, max ${ms(q(latencies, 1))}`);
  console.log(`  the write itself (POST /api/add-frodad/ answered): p50 ${ms(q(writes, 0.5))}, p99 ${ms(q(writes, 0.99))}`);
  console.log(`  after the write's answer (0 when the event came first): p50 ${ms(q(sinceAck, 0.5))}, p99 ${ms(q(sinceAck, 0.99))}`);
  console.log(`  server RSS: ${(rssBefore / 2 ** 20).toFixed(0)} MiB before, ${(rssOpen / 2 ** 20).toFixed(0)} MiB with the streams open: ${((rssOpen - rssBefore) / open / 1024).toFixed(1)} KiB per open stream`);
  console.log(`  machine: ${availableParallelism()} cores, load average ${loadavg()[0]!.toFixed(1)} (other work on the machine shows up in every figure)`);
  console.log(`  goal: p99 < 100 ms — ${p99 < 100 ? 'met' : 'NOT met'}`);

  child.send({ type: 'close' } satisfies ToClients);
  await sys.close();
}

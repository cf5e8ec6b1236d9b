// A first start alone: a copy of the seeded history without read models or stream indexes (what
// a fresh install starts from), started until it answers HTTP; time to first answer, events/s
// over the whole history, peak memory and each service's "rebuilt"/"copied" line. With
// --compare <checkout>, the other checkout starts on its own copy of the same history in the same
// run, alternating (this one, the other, this one, ...) `--rounds` times, as the machine is shared.
//
// npm run bench -- first-start [--compare <checkout>] [--rounds 1] [--data <seeded dir>]
//   [--users 10000 --groups 200 --casties 20000 --forecasts 500000 --friends 30]
import { rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createFileEventLog } from '../packages/platform/src/embedded/file-event-log.ts';
import { freshCopy, seededLog, sizesFrom } from './support/data-set.ts';
import { memoryOf, startCastie } from './support/processes.ts';
import { benchArgs } from './support/cli.ts';

const here = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { flag, has, compare } = benchArgs();
const rounds = Number(flag('rounds', '1'));
const say = (line: string) => process.stderr.write(`first-start: ${line}\n`);

const dataDir = has('data') ? resolve(flag('data', '')) : seededLog(here, sizesFrom(flag), say);
const log = await createFileEventLog({ dir: join(dataDir, 'log') });
let events = 0;
for (const topic of ['identity', 'identity-logins', 'groups', 'casties', 'social', 'notifications']) events += (await log.endOffsets(topic)).get(0) ?? 0;
await log.close();

async function firstStart(label: string, root: string): Promise<number> {
  const dir = freshCopy(dataDir);
  try {
    say(`${label}: first start of ${root} on ${events.toLocaleString('en-US')} events`);
    const server = await startCastie(root, dir);
    const peakMb = memoryOf(server.pid).peakMb;
    await server.stop();
    const seconds = server.firstAnswerMs / 1000;
    for (const l of server.lines) if (typeof l.msg === 'string' && / rebuilt | copied | built |indexed /.test(l.msg)) say(`  ${l.msg}`);
    say(`${label}: first answer after ${seconds.toFixed(1)} s (${Math.round(events / seconds).toLocaleString('en-US')} events/s), peak ${Math.round(peakMb)} MB`);
    return seconds;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const results: { label: string; seconds: number[] }[] = [{ label: 'this', seconds: [] }, ...(compare ? [{ label: 'compare', seconds: [] }] : [])];
for (let round = 0; round < rounds; round++) {
  // Alternating which goes first, so neither always meets the machine in the same state.
  const order = round % 2 === 0 ? results : [...results].reverse();
  for (const r of order) r.seconds.push(await firstStart(r.label, r.label === 'this' ? here : compare!));
}
for (const r of results) say(`${r.label}: ${r.seconds.map((s) => `${s.toFixed(1)} s`).join(', ')}`);
if (compare) {
  const best = (r: { seconds: number[] }) => Math.min(...r.seconds);
  say(`compare / this (best of each): ${(best(results[1]!) / best(results[0]!)).toFixed(2)}x`);
}

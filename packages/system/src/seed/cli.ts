import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { openEmbeddedEventStores } from '../embedded.ts';
import { parseSeedArgs, USAGE } from './arguments.ts';
import { ProgressBar } from './progress-bar.ts';
import { SeedError, seedHistory, type SeedSummary } from './seed-history.ts';

// `npm run seed -- <options>`: opens the embedded profile's event log and stores exactly as the
// system does, writes the history, closes them. Progress on stderr, the summary on stdout.

/** Bytes under a directory (the data dir's size after the seed). */
async function sizeOf(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? await sizeOf(path) : (await stat(path)).size;
  }
  return total;
}

const n = (value: number): string => value.toLocaleString('en');

function report(s: SeedSummary, dataDir: string, bytes: number): string {
  const topics = Object.entries(s.eventsByTopic).map(([topic, count]) => `${topic} ${n(count)}`).join(', ');
  const phases = Object.entries(s.phaseSeconds).map(([phase, seconds]) => `${phase} ${seconds}`).join(', ');
  const lines = [
    `seeded ${dataDir} in ${s.seconds} s`,
    `  people     ${n(s.users)}${s.handles ? ` (${s.handles[0]} .. ${s.handles[1]})` : ''}: ${n(s.privateUsers)} private, ${n(s.usersWithCity)} with a city`,
    `  hub        ${s.hub.handle} (${s.hub.email}): ${n(s.hub.frodads)} frodads, follows ${s.hub.groups} groups`,
    `  sign in    HTTP Basic seed<i>@example.com:${s.password}`,
    `  groups     ${n(s.groups)}: ${n(s.approvalGroups)} require approval (${n(s.groupAdmins)} with an admin)`,
    `  follows    ${n(s.follows)}: ${n(s.accessGranted)} granted after approval; ${n(s.pendingAccessRequests)} requests pending`,
    `  frodads    ${n(s.frodads)} friendships; ${n(s.pendingFrodadRequests)} requests pending`,
    `  casties    ${n(s.casties)}: ${n(s.withOptions)} with options, ${n(s.writeIn)} write-in; ${n(s.openEnded)} open-ended, ${n(s.ended)} ended`,
    `  forecasts  ${n(s.forecasts)} (${n(s.correctForecasts)} scored correct)`,
    `  answers    ${n(s.answered)} (${n(s.answeredOpenEnded)} of them open-ended)`,
    `  comments   ${n(s.comments)}`,
    `  events     ${n(s.events)} (${topics})`,
    `  history    ${s.from} .. ${s.now}, seed ${s.seed}`,
    `  seconds    ${s.seconds} (${phases})`,
    `  data dir   ${(bytes / 1e6).toFixed(1)} MB`,
    ...(s.notes.length > 0 ? ['notes:', ...s.notes.map((note) => `  - ${note}`)] : []),
  ];
  return `${lines.join('\n')}\n`;
}

const args = parseSeedArgs(process.argv.slice(2));
if (args.kind === 'help') {
  process.stdout.write(USAGE);
} else if (args.kind === 'error') {
  process.stderr.write(`seed: ${args.message}\n`);
  process.exitCode = 2;
} else {
  const dataDir = resolve(args.dataDir);
  process.stderr.write(`seed: writing into ${join(dataDir, 'log')}\n`);
  const events = await openEmbeddedEventStores(dataDir, { onWarning: (message) => process.stderr.write(`seed: warning: ${message}\n`) });
  let summary: SeedSummary | null = null;
  try {
    summary = await seedHistory(events, args.options, new ProgressBar(process.stderr));
  } catch (error) {
    process.stderr.write(error instanceof SeedError ? `\nseed: ${error.message}\n` : `\nseed: failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  } finally {
    await events.close();
  }
  if (summary) {
    if (args.json) process.stdout.write(`${JSON.stringify({ ...summary, dataDir, bytes: await sizeOf(dataDir) }, null, 2)}\n`);
    else process.stdout.write(report(summary, dataDir, await sizeOf(dataDir)));
  }
}

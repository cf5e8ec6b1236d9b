// Crash-test writer: appends to a file event log from several concurrent writers until killed, and
// prints "<offset> <writer> <seq>" for each acknowledged record. The test SIGKILLs it at a random
// moment and checks that every printed record survived. Usage: append-until-killed.ts <dir> <topic>
import { createFileEventLog } from '../file-event-log.ts';

const [dir, topic] = process.argv.slice(2);
if (!dir || !topic) throw new Error('usage: append-until-killed.ts <dir> <topic>');

/** Padding varies so frames differ in size; the test checks value and padding of every acknowledged record. */
const valueOf = (writer: number, seq: number): string => JSON.stringify({ writer, seq, pad: 'x'.repeat((seq * 37) % 300) });

const log = await createFileEventLog({ dir });
await Promise.all(
  Array.from({ length: 8 }, async (_, writer) => {
    for (let seq = 0; ; seq += 2) {
      const positions = await log.append(topic, [
        { key: `w${writer}`, value: valueOf(writer, seq) },
        { key: `w${writer}`, value: valueOf(writer, seq + 1) },
      ]);
      // Pipes are written synchronously on Linux, so a printed line was acknowledged before the kill.
      process.stdout.write(positions.map((p, i) => `${p.offset} ${writer} ${seq + i}\n`).join(''));
    }
  }),
);

import { constants, readSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import zlib from 'node:zlib';
import {
  positionKey,
  type EventLog,
  type LogPosition,
  type LogRecord,
  type NewLogRecord,
  type StartAt,
  type SubscribeOptions,
  type Subscription,
} from '../ports/event-log.ts';
import { deliverUntilHandled, HandledPositions, Pauses } from '../log/handled-positions.ts';

export interface FileEventLogOptions {
  /** Directory holding one `<topic>.log` file per topic and the consumer groups' positions. */
  dir: string;
  /**
   * Extra time an append waits so that more appends share its write and sync. 0 (default) syncs as
   * soon as the previous sync is done, which already batches every append that arrived meanwhile.
   */
  fsyncIntervalMs?: number;
  /** Told about repaired damage (a torn last record cut away) and about failed batches being retried. */
  onWarning?: (message: string) => void;
  /**
   * Reads what the log holds while another instance (which owns `dir`) keeps it: nothing is
   * written (no appends, repairs, indexes or consumer positions), a topic without a file is empty,
   * and records appended by the owner after open are not seen. For building read models in a
   * worker thread while the owner does not append (system/src/rebuild).
   */
  readOnly?: boolean;
  /**
   * Consumer positions are written at most this often (default 1000 ms), and at once when a
   * subscription stops or the log closes. A crash loses at most this much of them, which only
   * redelivers records (as Kafka consumers' auto-commit, every 5 s by default).
   */
  offsetsWriteIntervalMs?: number;
}

/*
 * On disk a topic is a sequence of frames: [u32 payload length][u32 crc32 of payload][payload],
 * payload = [f64 timestamp][u32 key byte length][key utf-8][value utf-8], all little-endian.
 * A binary payload avoids escaping the value (itself JSON) a second time.
 */
const FRAME_HEAD = 8;
const PAYLOAD_HEAD = 12;
/** Larger lengths can only come from a damaged header; refusing them keeps a bad length from swallowing the file. */
const MAX_PAYLOAD = 64 * 1024 * 1024;
const SCAN_CHUNK = 4 * 1024 * 1024;
const OFFSETS_FILE = 'consumer-offsets.json';
/** The saved index of record starts: magic, bytes covered (f64), then one f64 start per record. */
const INDEX_MAGIC = 'CSTART01';
const INDEX_HEAD = 16;
/** Records appended between two saves of the index. */
const INDEX_EVERY = 50_000;
/**
 * Bytes of the newest durable records kept in memory per topic: consumers follow the tail, and
 * streams just written are read again, so most reads under load need no file read at all.
 */
const TAIL_BYTES = 8 * 1024 * 1024;
/** Kafka's rule for topic names, which also makes them safe file names. */
const isTopicName = (name: string): boolean => /^[A-Za-z0-9._-]{1,249}$/.test(name) && name !== '.' && name !== '..';
const PARTITION = 0;

/** Native since Node 20.15; the table-driven fallback keeps older Node 20 releases working. */
const crc32: (data: Uint8Array) => number =
  typeof zlib.crc32 === 'function' ? (data) => zlib.crc32(data) : tableCrc32();

function tableCrc32(): (data: Uint8Array) => number {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return (data) => {
    let crc = 0xffffffff;
    for (let i = 0; i < data.length; i++) crc = table[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
    return (crc ^ 0xffffffff) >>> 0;
  };
}

/** Frames all records of one append into one buffer; `sizes` holds each frame's length. */
function encode(records: readonly NewLogRecord[], timestamp: number): { frames: Buffer; sizes: number[] } {
  const sizes = records.map((r) => FRAME_HEAD + PAYLOAD_HEAD + Buffer.byteLength(r.key) + Buffer.byteLength(r.value));
  const frames = Buffer.allocUnsafe(sizes.reduce((a, b) => a + b, 0));
  let at = 0;
  records.forEach((record, i) => {
    const size = sizes[i]!;
    if (size - FRAME_HEAD > MAX_PAYLOAD) throw new RangeError(`record of ${size} bytes exceeds the limit of ${MAX_PAYLOAD}`);
    const payload = at + FRAME_HEAD;
    frames.writeDoubleLE(timestamp, payload);
    const keyBytes = frames.write(record.key, payload + PAYLOAD_HEAD, 'utf8');
    frames.writeUInt32LE(keyBytes, payload + 8);
    frames.write(record.value, payload + PAYLOAD_HEAD + keyBytes, 'utf8');
    frames.writeUInt32LE(size - FRAME_HEAD, at);
    frames.writeUInt32LE(crc32(frames.subarray(payload, at + size)), at + 4);
    at += size;
  });
  return { frames, sizes };
}

async function readFully(fd: FileHandle, buffer: Buffer, position: number): Promise<void> {
  for (let done = 0; done < buffer.length; ) {
    const { bytesRead } = await fd.read(buffer, done, buffer.length - done, position + done);
    if (bytesRead === 0) throw new Error(`unexpected end of file at byte ${position + done}`);
    done += bytesRead;
  }
}

/**
 * Reads below this many bytes are made at once (pread), not through the thread pool: a stream
 * load of an older Castie reads a few KB, and a promise of fs/promises cost the event loop about
 * ten times the read itself from the page cache (7.5 % of it under 32 clients posting forecasts).
 * Larger reads (a consumer catching up) keep the event loop free while the disk reads.
 */
const READ_AT_ONCE_BYTES = 64 * 1024;

function readFullyNow(fd: FileHandle, buffer: Buffer, position: number): void {
  for (let done = 0; done < buffer.length; ) {
    const bytesRead = readSync(fd.fd, buffer, done, buffer.length - done, position + done);
    if (bytesRead === 0) throw new Error(`unexpected end of file at byte ${position + done}`);
    done += bytesRead;
  }
}

async function writeFully(fd: FileHandle, buffer: Buffer, position: number): Promise<void> {
  for (let done = 0; done < buffer.length; ) {
    const { bytesWritten } = await fd.write(buffer, done, buffer.length - done, position + done);
    done += bytesWritten;
  }
}

/** Makes a directory entry (a created or renamed file) durable. */
async function syncDir(dir: string): Promise<void> {
  const fd = await open(dir, 'r');
  try {
    await fd.sync();
  } finally {
    await fd.close();
  }
}

const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));

interface PendingAppend {
  records: readonly NewLogRecord[];
  timestamp: number;
  frames: Buffer;
  sizes: number[];
  resolve: (positions: LogPosition[]) => void;
  reject: (err: unknown) => void;
}

/** One topic's file: its durable records' byte positions, and the group commit that appends to it. */
class TopicFile {
  /** Byte position of every durable record: record i spans [starts[i], starts[i + 1] ?? size). */
  private starts: number[] = [];
  private size = 0;
  private queue: PendingAppend[] = [];
  private flushing = false;
  private drained: Promise<void> = Promise.resolve();
  private wakers: Array<() => void> = [];
  /** Set when a failed write could not be rolled back: the file's tail is unknown, so appends stop. */
  private broken: unknown = null;
  private closed = false;

  /** Records the saved index of starts covers (a newer one is saved once many more are appended). */
  private indexed = 0;
  private savingIndex: Promise<void> | null = null;

  /** The newest durable records, in offset order: tail[tailHead] has offset `end - (tail.length - tailHead)`. */
  private tail: LogRecord[] = [];
  private tailHead = 0;
  private tailBytes = 0;

  private constructor(
    readonly name: string,
    private readonly fd: FileHandle | null,
    private readonly gatherMs: number,
    private readonly path: string,
    private readonly readOnly: boolean,
  ) {}

  /** Opens (or creates) a topic's file, indexes its records and cuts away a damaged tail. */
  static async open(dir: string, name: string, gatherMs: number, warn: (message: string) => void, readOnly = false): Promise<TopicFile> {
    const path = join(dir, `${name}.log`);
    if (readOnly) {
      let fd: FileHandle;
      try {
        fd = await open(path, constants.O_RDONLY);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        return new TopicFile(name, null, gatherMs, path, true);
      }
      const topic = new TopicFile(name, fd, gatherMs, path, true);
      try {
        await topic.scan(path, warn, await topic.loadIndex());
      } catch (err) {
        await fd.close();
        throw err;
      }
      return topic;
    }
    let fd: FileHandle;
    let created = true;
    try {
      fd = await open(path, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL, 0o644);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      created = false;
      fd = await open(path, constants.O_RDWR);
    }
    const topic = new TopicFile(name, fd, gatherMs, path, false);
    try {
      // A new file's directory entry must be durable too, or a crash could lose acknowledged appends.
      if (created) await syncDir(dir);
      await topic.scan(path, warn, created ? 0 : await topic.loadIndex());
    } catch (err) {
      await fd.close();
      throw err;
    }
    return topic;
  }

  /** The open file (a read-only topic without a file has none: it holds no records to read). */
  private get handle(): FileHandle {
    if (!this.fd) throw new Error(`topic ${this.name} has no file`);
    return this.fd;
  }

  /** Offset the next record will get. */
  get end(): number {
    return this.starts.length;
  }

  /**
   * Loads the saved index of record starts (`<topic>.starts`): the bytes it covers were checked
   * when it was saved, so the scan at open only reads what came after. Returns the bytes covered
   * (0 without a usable index: a missing, torn or foreign file is ignored and the log scanned).
   */
  private async loadIndex(): Promise<number> {
    let bytes: Buffer;
    try {
      bytes = await readFile(`${this.path.slice(0, -'.log'.length)}.starts`);
    } catch {
      return 0;
    }
    const fileSize = (await this.handle.stat()).size;
    if (bytes.length < INDEX_HEAD || bytes.toString('latin1', 0, 8) !== INDEX_MAGIC || (bytes.length - INDEX_HEAD) % 8 !== 0) return 0;
    const covered = bytes.readDoubleLE(8);
    const count = (bytes.length - INDEX_HEAD) / 8;
    const starts: number[] = new Array<number>(count);
    for (let i = 0; i < count; i++) starts[i] = bytes.readDoubleLE(INDEX_HEAD + i * 8);
    const sane = covered <= fileSize && (count === 0 ? covered === 0 : starts[0] === 0 && starts[count - 1]! < covered && starts.every((v, i) => i === 0 || v > starts[i - 1]!));
    if (!sane) return 0;
    this.starts = starts;
    this.indexed = count;
    return covered;
  }

  /** Saves the index of record starts beside the log (temp file + rename; a cache, so no sync). */
  private async saveIndex(): Promise<void> {
    const count = this.starts.length;
    const bytes = Buffer.allocUnsafe(INDEX_HEAD + count * 8);
    bytes.write(INDEX_MAGIC, 0, 'latin1');
    bytes.writeDoubleLE(this.size, 8);
    for (let i = 0; i < count; i++) bytes.writeDoubleLE(this.starts[i]!, INDEX_HEAD + i * 8);
    const target = `${this.path.slice(0, -'.log'.length)}.starts`;
    await writeFile(`${target}.tmp`, bytes);
    await rename(`${target}.tmp`, target);
    this.indexed = count;
  }

  private async scan(path: string, warn: (message: string) => void, from: number): Promise<void> {
    const fileSize = (await this.handle.stat()).size;
    let chunk = Buffer.allocUnsafe(Math.min(SCAN_CHUNK, Math.max(fileSize, FRAME_HEAD)));
    let chunkStart = 0;
    let chunkLength = 0;
    // Makes bytes [from, from + length) available in `chunk`, reading ahead a chunk at a time.
    const ensure = async (from: number, length: number): Promise<number> => {
      if (from >= chunkStart && from + length <= chunkStart + chunkLength) return from - chunkStart;
      if (length > chunk.length) chunk = Buffer.allocUnsafe(length);
      chunkStart = from;
      chunkLength = Math.min(chunk.length, fileSize - from);
      await readFully(this.handle, chunk.subarray(0, chunkLength), from);
      return 0;
    };
    let at = from;
    let damage: string | null = null;
    while (at < fileSize) {
      if (fileSize - at < FRAME_HEAD) {
        damage = 'a torn frame header';
        break;
      }
      const head = await ensure(at, FRAME_HEAD);
      const length = chunk.readUInt32LE(head);
      const crc = chunk.readUInt32LE(head + 4);
      if (length < PAYLOAD_HEAD || length > MAX_PAYLOAD) {
        damage = `an impossible record length ${length}`;
        break;
      }
      if (fileSize - at < FRAME_HEAD + length) {
        damage = 'a torn record';
        break;
      }
      const frame = await ensure(at, FRAME_HEAD + length);
      if (crc32(chunk.subarray(frame + FRAME_HEAD, frame + FRAME_HEAD + length)) !== crc) {
        damage = 'a record with a bad checksum';
        break;
      }
      this.starts.push(at);
      at += FRAME_HEAD + length;
    }
    if (damage && this.readOnly) throw new Error(`${path}: found ${damage} at byte ${at} after ${this.starts.length} records (read-only: left for the log's owner to repair)`);
    if (damage) {
      // Only a write cut short by a crash leaves damage behind; nothing past it was acknowledged.
      warn(`${path}: found ${damage} at byte ${at} after ${this.starts.length} records; cut away ${fileSize - at} bytes`);
      await this.handle.truncate(at);
      await this.handle.datasync();
    }
    this.size = at;
  }

  /** Queues records for the next group commit; resolves once they are written and synced. */
  append(records: readonly NewLogRecord[]): Promise<LogPosition[]> {
    if (this.readOnly) return Promise.reject(new Error(`topic ${this.name} is open read-only`));
    if (this.closed) return Promise.reject(new Error(`topic ${this.name} is closed`));
    if (this.broken) return Promise.reject(new Error(`topic ${this.name} is unusable after a failed write: ${errorMessage(this.broken)}`));
    const timestamp = Date.now();
    const { frames, sizes } = encode(records, timestamp);
    return new Promise((resolve, reject) => {
      this.queue.push({ records, timestamp, frames, sizes, resolve, reject });
      if (!this.flushing) {
        this.flushing = true;
        this.drained = this.flush();
      }
    });
  }

  /** Writes everything queued as one write + one fdatasync, repeatedly, until the queue stays empty. */
  private async flush(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        if (this.gatherMs > 0) await new Promise((r) => setTimeout(r, this.gatherMs));
        const batch = this.queue;
        this.queue = [];
        const frames = batch.length === 1 ? batch[0]!.frames : Buffer.concat(batch.map((b) => b.frames));
        try {
          await writeFully(this.handle, frames, this.size);
          await this.handle.datasync();
        } catch (err) {
          await this.rollback(err);
          for (const pending of batch) pending.reject(err);
          continue;
        }
        let at = this.size;
        for (const pending of batch) {
          pending.resolve(
            pending.sizes.map((size, i) => {
              this.starts.push(at);
              at += size;
              const offset = this.starts.length - 1;
              const { key, value } = pending.records[i]!;
              this.keep({ topic: this.name, partition: PARTITION, offset, key, value, timestamp: pending.timestamp }, size);
              return { topic: this.name, partition: PARTITION, offset };
            }),
          );
        }
        this.size = at;
        this.wake();
        // Now and then the index of starts is saved, so a start after a crash scans little.
        if (this.starts.length - this.indexed >= INDEX_EVERY && !this.savingIndex) {
          this.savingIndex = this.saveIndex()
            .catch(() => undefined)
            .finally(() => (this.savingIndex = null));
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  /** Cuts off a partly written batch so the next batch starts at a frame boundary. */
  private async rollback(cause: unknown): Promise<void> {
    try {
      await this.handle.truncate(this.size);
    } catch {
      this.broken = cause;
      for (const pending of this.queue.splice(0)) pending.reject(cause);
    }
  }

  /** Keeps a just-durable record in the in-memory tail, dropping the oldest beyond TAIL_BYTES. */
  private keep(record: LogRecord, bytes: number): void {
    this.tail.push(record);
    this.tailBytes += bytes;
    while (this.tailBytes > TAIL_BYTES && this.tailHead < this.tail.length - 1) {
      const dropped = this.tail[this.tailHead]!;
      this.tail[this.tailHead++] = undefined as unknown as LogRecord;
      this.tailBytes -= this.starts[dropped.offset + 1]! - this.starts[dropped.offset]!;
    }
    if (this.tailHead > 4096 && this.tailHead * 2 > this.tail.length) {
      this.tail = this.tail.slice(this.tailHead);
      this.tailHead = 0;
    }
  }

  /** Reads up to `max` durable records from `from` on: from the in-memory tail, else with one file read. */
  async read(from: number, max: number): Promise<LogRecord[]> {
    const to = Math.min(this.starts.length, from + max);
    if (from >= to) return [];
    const tailFrom = this.starts.length - (this.tail.length - this.tailHead);
    if (from >= tailFrom) return this.tail.slice(this.tailHead + from - tailFrom, this.tailHead + to - tailFrom).map((r) => ({ ...r }));
    const start = this.starts[from]!;
    const buffer = Buffer.allocUnsafe((to < this.starts.length ? this.starts[to]! : this.size) - start);
    if (buffer.length < READ_AT_ONCE_BYTES) readFullyNow(this.handle, buffer, start);
    else await readFully(this.handle, buffer, start);
    const records: LogRecord[] = [];
    let at = 0;
    for (let offset = from; offset < to; offset++) {
      const payload = at + FRAME_HEAD;
      const end = payload + buffer.readUInt32LE(at);
      // Records under the saved index were not checked at open: every read checks its own.
      if (crc32(buffer.subarray(payload, end)) !== buffer.readUInt32LE(at + 4)) throw new Error(`${this.name}@${offset}: the record is damaged (bad checksum)`);
      const keyEnd = payload + PAYLOAD_HEAD + buffer.readUInt32LE(payload + 8);
      records.push({
        topic: this.name,
        partition: PARTITION,
        offset,
        key: buffer.toString('utf8', payload + PAYLOAD_HEAD, keyEnd),
        value: buffer.toString('utf8', keyEnd, end),
        timestamp: buffer.readDoubleLE(payload),
      });
      at = end;
    }
    return records;
  }

  /** Resolves at the next durable append, or when `wake` is called. */
  changed(): Promise<void> {
    return new Promise((resolve) => this.wakers.push(resolve));
  }

  wake(): void {
    const wakers = this.wakers;
    this.wakers = [];
    for (const wake of wakers) wake();
  }

  /** Waits for queued appends, saves the index of starts, then closes the file. */
  async close(): Promise<void> {
    this.closed = true;
    await this.drained;
    this.wake();
    await this.savingIndex;
    if (!this.readOnly && !this.broken && this.starts.length > this.indexed) await this.saveIndex().catch(() => undefined);
    await this.fd?.close();
  }
}

/**
 * Committed positions of consumer groups (next offset to read, per group and `topic:partition`),
 * in one small JSON file replaced atomically (temp file + rename). Writes run in the background and
 * coalesce: losing the latest ones in a crash only redelivers records, which consumers tolerate.
 * Under load every group commits after every batch (about fifty times a second each); the file is
 * rewritten at most once per `intervalMs` (each rewrite an open, a sync, a rename and a close, on
 * the disk the appends sync to), and at once on `flush`.
 */
class CommittedOffsets {
  private writing = false;
  /** Bumped by every `set`; `durable`: the count the file holds. */
  private changes = 0;
  private durable = 0;
  /** `flush` calls waiting for the file to hold the changes made before them. */
  private waiting: { changes: number; done: () => void }[] = [];
  /** Ends the wait before the next rewrite (a `flush`). */
  private hurry: (() => void) | null = null;
  /** Set by `flush`: the next rewrite does not wait. */
  private urgent = false;
  private lastWrite = -Infinity;

  private constructor(
    private readonly dir: string,
    private readonly groups: Map<string, Map<string, number>>,
    private readonly warn: (message: string) => void,
    /** Positions are kept in memory only (a read-only log writes nothing). */
    private readonly readOnly: boolean,
    private readonly intervalMs: number,
  ) {}

  static async load(dir: string, warn: (message: string) => void, readOnly = false, intervalMs = 1000): Promise<CommittedOffsets> {
    const path = join(dir, OFFSETS_FILE);
    // Maps, not objects: group names are free text, and `__proto__` must stay a plain name.
    const groups = new Map<string, Map<string, number>>();
    try {
      const stored = JSON.parse(await readFile(path, 'utf8')) as Record<string, Record<string, number>>;
      for (const [group, positions] of Object.entries(stored)) groups.set(group, new Map(Object.entries(positions)));
    } catch (err) {
      // Without the file every group starts over: at-least-once delivery makes that safe.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') warn(`${path}: unreadable (${errorMessage(err)}); consumer groups start from the beginning`);
    }
    return new CommittedOffsets(dir, groups, warn, readOnly, intervalMs);
  }

  get(group: string, key: string): number | undefined {
    return this.groups.get(group)?.get(key);
  }

  set(group: string, key: string, next: number): void {
    const positions = this.groups.get(group) ?? new Map<string, number>();
    this.groups.set(group, positions.set(key, next));
    if (this.readOnly) return;
    this.changes++;
    if (!this.writing) {
      this.writing = true;
      void this.write();
    }
  }

  /**
   * Resolves once every position set so far is on disk (or its write failed and was reported),
   * without waiting for the interval, nor for positions set after the call.
   */
  flush(): Promise<void> {
    if (this.durable >= this.changes) return Promise.resolve();
    const flushed = new Promise<void>((done) => this.waiting.push({ changes: this.changes, done }));
    this.urgent = true;
    this.hurry?.();
    // After a failed rewrite nothing is under way until the next `set`.
    if (!this.writing) {
      this.writing = true;
      void this.write();
    }
    return flushed;
  }

  private async write(): Promise<void> {
    try {
      while (this.durable < this.changes) {
        const wait = this.lastWrite + this.intervalMs - performance.now();
        if (wait > 0 && !this.urgent) await this.pause(wait);
        this.urgent = false;
        const changes = this.changes;
        const path = join(this.dir, OFFSETS_FILE);
        const fd = await open(`${path}.tmp`, 'w');
        try {
          await fd.writeFile(JSON.stringify(Object.fromEntries([...this.groups].map(([group, positions]) => [group, Object.fromEntries(positions)]))));
          await fd.datasync();
        } finally {
          await fd.close();
        }
        await rename(`${path}.tmp`, path);
        this.lastWrite = performance.now();
        this.durable = changes;
        this.settle((w) => w.changes <= changes);
      }
    } catch (err) {
      // Retried after the interval too: a full disk is not tried (and reported) at every commit.
      this.lastWrite = performance.now();
      this.warn(`committing consumer positions failed (retried at the next commit after ${this.intervalMs} ms): ${errorMessage(err)}`);
      this.settle(() => true);
    } finally {
      this.writing = false;
      // Every flush waiting was settled: the next rewrite waits for the interval again.
      this.urgent = false;
    }
  }

  /** Resolves the waiting `flush` calls that `done` picks. */
  private settle(done: (w: { changes: number }) => boolean): void {
    const settled = this.waiting.filter(done);
    this.waiting = this.waiting.filter((w) => !done(w));
    for (const w of settled) w.done();
  }

  /** Waits `ms` (what is left of `intervalMs` since the last rewrite), or until `flush`; never keeps the process alive. */
  private pause(ms: number): Promise<void> {
    return new Promise<void>((resume) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      this.hurry = done;
      function done(): void {
        clearTimeout(timer);
        resume();
      }
    }).finally(() => (this.hurry = null));
  }
}


/** One subscription: a sequential consumer per topic (each topic has one partition). */
class FileSubscription implements Subscription {
  private readonly handledPositions: HandledPositions;
  private readonly pauses = new Pauses();
  /** The waits between batches (see batchIntervalMs), which a waiter cuts short (see waitFor); apart from the pauses between retries, which it does not. */
  private readonly intervals = new Pauses();
  /** Topics with a waiter for a record that no batch has read yet, until their next batch starts. */
  private readonly waited = new Set<string>();
  /** Per topic, the offset after the last record read into a batch (being handled, or handled). */
  private readonly read = new Map<string, number>();
  private readonly topics: Set<string>;
  private readonly loops: Promise<void>[];
  private stopping = false;
  private stopped: Promise<void> | null = null;

  constructor(
    private readonly options: SubscribeOptions,
    private readonly files: TopicFile[],
    starts: number[],
    private readonly offsets: CommittedOffsets,
    private readonly warn: (message: string) => void,
    private readonly onStopped: () => void,
  ) {
    this.topics = new Set(files.map((f) => f.name));
    this.handledPositions = new HandledPositions(this.topics);
    // Starting at an offset means everything before it counts as handled (waitFor resolves for it).
    files.forEach((file, i) => {
      this.read.set(file.name, starts[i]!);
      if (starts[i]! > 0) this.handledPositions.mark(positionKey({ topic: file.name, partition: PARTITION }), starts[i]! - 1);
    });
    this.loops = files.map((file, i) =>
      this.consume(file, starts[i]!).catch((err: unknown) => warn(`consumer group ${options.group} stopped reading ${file.name}: ${errorMessage(err)}`)),
    );
  }

  private async consume(file: TopicFile, start: number): Promise<void> {
    const key = positionKey({ topic: file.name, partition: PARTITION });
    const maxBatch = this.options.maxBatch ?? 500;
    const { batchIntervalMs = 0, waitedBatchIntervalMs } = this.options;
    const intervalAfter = typeof batchIntervalMs === 'number' ? () => batchIntervalMs : batchIntervalMs;
    let next = start;
    let lastBatch = -Infinity;
    let interval = 0;
    let waitedInterval = 0;
    while (!this.stopping) {
      if (next >= file.end) {
        await file.changed();
        continue;
      }
      // Under load, the records of the next few milliseconds join this batch (see batchIntervalMs),
      // fewer once someone waits for one of them (a waiter cuts the wait short: it is measured again).
      for (;;) {
        const wait = lastBatch + (this.waited.has(file.name) ? waitedInterval : interval) - performance.now();
        if (wait <= 0 || file.end - next >= maxBatch || this.stopping) break;
        await this.intervals.wait(wait);
      }
      if (this.stopping) break;
      // This batch reads all the file holds now, so every record waited for (a waiter waits for
      // records appended already) is in it.
      if (file.end - next <= maxBatch) this.waited.delete(file.name);
      lastBatch = performance.now();
      const records = await file.read(next, maxBatch);
      this.read.set(file.name, next + records.length);
      interval = intervalAfter(records.length);
      waitedInterval = Math.min(interval, waitedBatchIntervalMs ?? interval);
      if (!(await this.deliver(records))) return;
      next += records.length;
      this.offsets.set(this.options.group, key, next);
      this.handledPositions.mark(key, next - 1);
    }
  }

  private deliver(records: LogRecord[]): Promise<boolean> {
    const first = records[0]!;
    return deliverUntilHandled(this.options.handle, records, {
      pauses: this.pauses,
      stopping: () => this.stopping,
      warn: this.warn,
      describe: `consumer group ${this.options.group}: handling ${first.topic} offsets ${first.offset}..${first.offset + records.length - 1}`,
    });
  }

  handled(): ReadonlyMap<string, number> {
    return this.handledPositions.offsets;
  }

  /** A position that no batch has read yet brings its topic's next batch forward (see waitedBatchIntervalMs). */
  waitFor(positions: readonly LogPosition[], timeoutMs: number): Promise<boolean> {
    let hurried = false;
    for (const p of positions) {
      if (!this.topics.has(p.topic) || (this.read.get(p.topic) ?? 0) > p.offset) continue;
      this.waited.add(p.topic);
      hurried = true;
    }
    if (hurried) this.intervals.cutAll();
    return this.handledPositions.waitFor(positions, timeoutMs);
  }

  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.stopping = true;
      for (const file of this.files) file.wake();
      this.pauses.cutAll();
      this.intervals.cutAll();
      await Promise.all(this.loops);
      this.handledPositions.close();
      await this.offsets.flush();
      this.onStopped();
    })();
    return this.stopped;
  }
}

/** The embedded log: the port, plus reading records by offset (the embedded event store reads streams so). */
export interface FileEventLog extends EventLog {
  /** The directory holding the log (stores derived from it, like stream indexes, may live beside it). */
  readonly dir: string;
  /** Up to `max` durable records of the topic's one partition from offset `from` on, in order. */
  read(topic: string, from: number, max: number): Promise<LogRecord[]>;
}

/**
 * Opens the embedded event log: a durable, crash-safe log in `dir`, one partition (0) per topic,
 * one append-only file per topic. An append resolves once its bytes are written and fdatasync'ed;
 * concurrent appends to a topic share one write and one sync (group commit). At open a torn or
 * corrupt tail (from a crash mid-write) is reported through `onWarning` and cut away.
 *
 * Consumer groups commit the next offset to read after each handled batch; without `startAt` a
 * subscription starts at the group's committed position. A group may have one live subscription
 * per topic in one log: a second one throws, since two would hand out the same records twice and
 * move the committed position back and forth. One process owns `dir` at a time.
 */
export async function createFileEventLog(options: FileEventLogOptions): Promise<FileEventLog> {
  const { dir, fsyncIntervalMs = 0 } = options;
  const warn = options.onWarning ?? (() => {});
  const readOnly = options.readOnly ?? false;
  if (!readOnly) await mkdir(dir, { recursive: true });
  const offsets = await CommittedOffsets.load(dir, warn, readOnly, options.offsetsWriteIntervalMs);
  const files = new Map<string, Promise<TopicFile>>();
  const claims = new Set<string>();
  const subscriptions = new Set<FileSubscription>();
  let closed = false;
  let closing: Promise<void> | null = null;

  const assertOpen = (): void => {
    if (closed) throw new Error(`event log in ${dir} is closed`);
  };

  const topicFile = (name: string): Promise<TopicFile> => {
    if (!isTopicName(name)) throw new Error(`invalid topic name "${name}": use letters, digits, '.', '_' and '-'`);
    let file = files.get(name);
    if (!file) {
      file = TopicFile.open(dir, name, fsyncIntervalMs, warn, readOnly);
      files.set(name, file);
      file.catch(() => files.delete(name));
    }
    return file;
  };

  const startOffset = (group: string, file: TopicFile, at: StartAt): number => {
    if (at === 'earliest') return 0;
    if (at !== 'committed') {
      if (!Number.isSafeInteger(at.offset) || at.offset < 0) throw new Error(`invalid start offset ${at.offset} for ${file.name}`);
      return at.offset;
    }
    const committed = offsets.get(group, positionKey({ topic: file.name, partition: PARTITION })) ?? 0;
    if (committed <= file.end) return committed;
    // Only possible when the topic's file was replaced: its records are all new to the group.
    warn(`consumer group ${group}: committed offset ${committed} is past the end of ${file.name} (${file.end}); starting from the beginning`);
    return 0;
  };

  // Open existing topics now, so damage is found and repaired at start rather than on first use.
  for (const entry of await readdir(dir)) {
    const name = entry.slice(0, -'.log'.length);
    if (entry.endsWith('.log') && isTopicName(name)) await topicFile(name);
  }

  return {
    dir,

    async append(topic, records) {
      assertOpen();
      if (records.length === 0) return [];
      return (await topicFile(topic)).append(records);
    },

    async subscribe(subscribeOptions) {
      assertOpen();
      const { group } = subscribeOptions;
      const topics = [...new Set(subscribeOptions.topics)];
      if (topics.length === 0) throw new Error('subscribe needs at least one topic');
      const claimed = topics.map((topic) => `${group}\u0000${topic}`);
      const taken = claimed.findIndex((claim) => claims.has(claim));
      if (taken >= 0) throw new Error(`consumer group ${group} already has a subscription to ${topics[taken]} in this process`);
      for (const claim of claimed) claims.add(claim);
      try {
        const subscribed = await Promise.all(topics.map(topicFile));
        const starts: number[] = [];
        for (const file of subscribed) starts.push(startOffset(group, file, (await subscribeOptions.startAt?.(file.name, PARTITION)) ?? 'committed'));
        assertOpen();
        const subscription: FileSubscription = new FileSubscription(subscribeOptions, subscribed, starts, offsets, warn, () => {
          subscriptions.delete(subscription);
          for (const claim of claimed) claims.delete(claim);
        });
        subscriptions.add(subscription);
        return subscription;
      } catch (err) {
        for (const claim of claimed) claims.delete(claim);
        throw err;
      }
    },

    async endOffsets(topic) {
      assertOpen();
      return new Map([[PARTITION, (await topicFile(topic)).end]]);
    },

    async read(topic, from, max) {
      assertOpen();
      return (await topicFile(topic)).read(from, max);
    },

    close() {
      closing ??= (async () => {
        closed = true;
        await Promise.all([...subscriptions].map((s) => s.stop()));
        const opened = await Promise.allSettled(files.values());
        await Promise.all(opened.map((o) => (o.status === 'fulfilled' ? o.value.close() : undefined)));
        await offsets.flush();
      })();
      return closing;
    },
  };
}

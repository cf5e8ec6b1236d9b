import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, extname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { MediaStore } from '../ports/media.ts';

const CONTENT_TYPES: Record<string, string> = {
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.svg': 'image/svg+xml',
};

/**
 * A key is one or more `/`-separated segments of letters, digits, `_`, `-` and `.`, none starting
 * with a dot: so no `..`, no absolute path, and no clash with the store's own `.meta` and `.tmp`.
 */
const VALID_KEY = /^[A-Za-z0-9_-][A-Za-z0-9._-]*(\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$/;

/**
 * The embedded media store: each key is a file under `dir`. Writes go to a temporary file that is
 * renamed into place, so a reader sees the old bytes or the new ones, never a part. The content
 * type is kept in a sidecar under `dir/.meta/`; without one it is derived from the extension.
 */
export function createLocalMediaStore({ dir }: { dir: string }): MediaStore {
  const fileOf = (key: string): string => join(dir, key);
  const metaOf = (key: string): string => join(dir, '.meta', `${key}.json`);
  const tempFile = (): string => join(dir, '.tmp', randomBytes(8).toString('hex'));

  async function place(temp: string, target: string): Promise<void> {
    await mkdir(dirname(target), { recursive: true });
    await rename(temp, target);
  }

  async function contentTypeOf(key: string): Promise<string> {
    try {
      const meta = JSON.parse(await readFile(metaOf(key), 'utf8')) as { contentType?: unknown };
      if (typeof meta.contentType === 'string') return meta.contentType;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    return CONTENT_TYPES[extname(key).toLowerCase()] ?? 'application/octet-stream';
  }

  return {
    async put(key, body, contentType) {
      if (!VALID_KEY.test(key)) throw new Error(`invalid media key ${JSON.stringify(key)}`);
      await mkdir(join(dir, '.tmp'), { recursive: true });
      const data = tempFile();
      const meta = tempFile();
      try {
        if (Buffer.isBuffer(body)) await writeFile(data, body);
        else await pipeline(body as Readable, createWriteStream(data));
        await writeFile(meta, JSON.stringify({ contentType }));
        // Meta first: a reader between the two renames gets the new type with the old bytes at
        // worst, which is harmless for pictures; never bytes without a type.
        await place(meta, metaOf(key));
        await place(data, fileOf(key));
      } finally {
        await Promise.all([rm(data, { force: true }), rm(meta, { force: true })]);
      }
    },

    async get(key) {
      // An invalid key names nothing, the same as an unknown one.
      if (!VALID_KEY.test(key)) return null;
      let handle;
      try {
        handle = await open(fileOf(key), 'r');
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') return null;
        throw error;
      }
      try {
        // Size and bytes come from the same open file, even if the key is replaced meanwhile.
        const stats = await handle.stat();
        if (!stats.isFile()) {
          await handle.close();
          return null;
        }
        const contentType = await contentTypeOf(key);
        return { body: handle.createReadStream(), contentType, size: stats.size };
      } catch (error) {
        await handle.close();
        throw error;
      }
    },

    async delete(key) {
      if (!VALID_KEY.test(key)) return;
      await rm(fileOf(key), { force: true });
      await rm(metaOf(key), { force: true });
    },

    async close() {},
  };
}

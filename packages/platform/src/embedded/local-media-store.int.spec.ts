import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { describeMediaStore } from '../testing/conformance/media.ts';
import { createLocalMediaStore } from './local-media-store.ts';

const dirs: string[] = [];
async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'castie-media-'));
  dirs.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describeMediaStore('local directory', async () => createLocalMediaStore({ dir: await freshDir() }));

describe('local media store', () => {
  const invalidKeys = ['../escape.png', 'a/../../escape.png', '/etc/passwd', '.meta/x.json', 'a/.hidden', 'a//b', 'a/', '', 'a\\b'];

  it('rejects keys that would leave the directory or touch its own files', async () => {
    const media = createLocalMediaStore({ dir: await freshDir() });
    for (const key of invalidKeys) {
      await expect(media.put(key, Buffer.from('x'), 'image/png'), key).rejects.toThrow(/invalid media key/);
      expect(await media.get(key), key).toBeNull();
      await media.delete(key);
    }
  });

  it('keeps objects as files under the directory, with no temporary files left', async () => {
    const dir = await freshDir();
    const media = createLocalMediaStore({ dir });
    await media.put('profile/ab.png', Buffer.from('png'), 'image/png');
    await media.put('profile/ab.png', Readable.from([Buffer.from('again')]), 'image/png');
    expect(await readdir(join(dir, 'profile'))).toEqual(['ab.png']);
    expect(await readdir(join(dir, '.tmp'))).toEqual([]);
  });

  it('derives the content type from the extension when the sidecar is missing', async () => {
    const dir = await freshDir();
    const media = createLocalMediaStore({ dir });
    await writeFile(join(dir, 'copied.jpg'), 'jpeg bytes');
    await writeFile(join(dir, 'unknown.bin'), 'bytes');
    expect((await media.get('copied.jpg'))?.contentType).toBe('image/jpeg');
    expect((await media.get('unknown.bin'))?.contentType).toBe('application/octet-stream');
  });

  it('a failing upload stream leaves the previous object in place', async () => {
    const dir = await freshDir();
    const media = createLocalMediaStore({ dir });
    await media.put('icon.png', Buffer.from('old'), 'image/png');
    const failing = new Readable({
      read() {
        this.push(Buffer.from('partial'));
        this.destroy(new Error('connection reset'));
      },
    });
    await expect(media.put('icon.png', failing, 'image/webp')).rejects.toThrow(/connection reset/);
    const object = await media.get('icon.png');
    expect(object?.contentType).toBe('image/png');
    expect(object?.size).toBe(3);
    object?.body.destroy();
    expect(await readdir(join(dir, '.tmp'))).toEqual([]);
  });

  it('answers null for a key that names a directory', async () => {
    const media = createLocalMediaStore({ dir: await freshDir() });
    await media.put('group/icon.png', Buffer.from('x'), 'image/png');
    expect(await media.get('group')).toBeNull();
  });
});

import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { MediaStore } from '../../index.ts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

async function bytesOf(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/**
 * The contract every media adapter fulfils (local directory, GridFS). `makeStore` gives a store
 * per test; keys are unique per test, so a shared server works.
 */
export function describeMediaStore(name: string, makeStore: () => MediaStore | Promise<MediaStore>): void {
  describe(`media store conformance: ${name}`, () => {
    let media: MediaStore;
    let prefix: string;
    beforeEach(async () => {
      media = await makeStore();
      prefix = `t${randomUUID().slice(0, 8)}`;
    });
    afterEach(async () => {
      await media.close();
    });

    const read = async (key: string) => {
      const object = await media.get(key);
      return object && { contentType: object.contentType, size: object.size, bytes: await bytesOf(object.body) };
    };

    it('returns the stored bytes, content type and size', async () => {
      const key = `${prefix}/profile/ab12.png`;
      const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]);
      await media.put(key, bytes, 'image/png');
      expect(await read(key)).toEqual({ contentType: 'image/png', size: 8, bytes });
    });

    it('stores a stream', async () => {
      const key = `${prefix}/icons/big.jpg`;
      const chunks = Array.from({ length: 40 }, (_, i) => Buffer.alloc(32 * 1024, i));
      await media.put(key, Readable.from(chunks), 'image/jpeg');
      const object = await read(key);
      expect(object?.contentType).toBe('image/jpeg');
      expect(object?.size).toBe(40 * 32 * 1024);
      expect(object?.bytes.equals(Buffer.concat(chunks))).toBe(true);
    });

    it('stores an empty object', async () => {
      await media.put(`${prefix}/empty.gif`, Buffer.alloc(0), 'image/gif');
      expect(await read(`${prefix}/empty.gif`)).toEqual({ contentType: 'image/gif', size: 0, bytes: Buffer.alloc(0) });
    });

    it('replaces what was stored under the key, type included', async () => {
      const key = `${prefix}/p.img`;
      await media.put(key, Buffer.from('first version'), 'image/png');
      await media.put(key, Buffer.from('second'), 'image/webp');
      expect(await read(key)).toEqual({ contentType: 'image/webp', size: 6, bytes: Buffer.from('second') });
    });

    it('answers null for an unknown key', async () => {
      expect(await media.get(`${prefix}/nothing.png`)).toBeNull();
    });

    it('keeps keys apart, including keys that share a prefix', async () => {
      await media.put(`${prefix}/a/one.png`, Buffer.from('one'), 'image/png');
      await media.put(`${prefix}/a/two.png`, Buffer.from('two'), 'image/png');
      await media.put(`${prefix}/b/one.png`, Buffer.from('b-one'), 'image/png');
      expect((await read(`${prefix}/a/one.png`))?.bytes.toString()).toBe('one');
      expect((await read(`${prefix}/a/two.png`))?.bytes.toString()).toBe('two');
      expect((await read(`${prefix}/b/one.png`))?.bytes.toString()).toBe('b-one');
    });

    it('deletes an object, and deleting an unknown key is not an error', async () => {
      await media.put(`${prefix}/gone.png`, Buffer.from('x'), 'image/png');
      await media.put(`${prefix}/kept.png`, Buffer.from('y'), 'image/png');
      await media.delete(`${prefix}/gone.png`);
      await media.delete(`${prefix}/never-was.png`);
      expect(await media.get(`${prefix}/gone.png`)).toBeNull();
      expect((await read(`${prefix}/kept.png`))?.bytes.toString()).toBe('y');
    });

    it('serves concurrent writes to different keys', async () => {
      const keys = Array.from({ length: 20 }, (_, i) => `${prefix}/many/${i}.png`);
      await Promise.all(keys.map((key, i) => media.put(key, Buffer.from(`n${i}`), 'image/png')));
      const contents = await Promise.all(keys.map(async (key) => (await read(key))?.bytes.toString()));
      expect(contents).toEqual(keys.map((_, i) => `n${i}`));
    });
  });
}

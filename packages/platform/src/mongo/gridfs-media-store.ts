import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GridFSBucket, type MongoClient, type ObjectId } from 'mongodb';
import type { MediaStore } from '../ports/media.ts';
import { connectMongo } from './mongo-document-store.ts';

export type GridFsMediaStoreOptions = ({ url: string } | { client: MongoClient }) & {
  database: string;
  /** GridFS bucket name (collections `<bucket>.files` and `<bucket>.chunks`); default `media`. */
  bucket?: string;
};

interface MediaFile {
  _id: ObjectId;
  length: number;
  metadata?: { contentType?: string };
}

/**
 * The media port on MongoDB GridFS: a key is a GridFS file name, the content type is kept in the
 * file's metadata. A put uploads a new file and then removes the older files of that name, so a
 * reader sees the old bytes or the new ones, never a mix: reads take the newest complete file
 * (GridFS writes the files document only after the last chunk). A reader that opened a file just
 * before a put removed it may see its stream fail; the next read gets the new file.
 */
export function createGridFsMediaStore(options: GridFsMediaStoreOptions): MediaStore {
  const ownsClient = 'url' in options;
  const client = 'url' in options ? connectMongo(options.url) : options.client;
  const bucket = new GridFSBucket(client.db(options.database), { bucketName: options.bucket ?? 'media' });
  // Newest first; _id breaks ties within one millisecond (ObjectIds of one process only grow).
  const newestFirst = { uploadDate: -1, _id: -1 } as const;

  const filesOf = async (key: string): Promise<MediaFile[]> => (await bucket.find({ filename: key }, { sort: newestFirst }).toArray()) as MediaFile[];

  async function remove(files: readonly MediaFile[]): Promise<void> {
    for (const file of files) {
      // Deleted meanwhile by a concurrent put or delete: that is the goal anyway.
      await bucket.delete(file._id).catch((err: unknown) => {
        if (!/not found/i.test((err as Error).message)) throw err;
      });
    }
  }

  return {
    async put(key, body, contentType) {
      const upload = bucket.openUploadStream(key, { metadata: { contentType } });
      await pipeline(Buffer.isBuffer(body) ? Readable.from([body]) : body, upload);
      // Only the files older than this one go: of two concurrent puts, the newer one stays.
      const files = await filesOf(key);
      const mine = files.findIndex((f) => f._id.equals(upload.id));
      await remove(mine >= 0 ? files.slice(mine + 1) : []);
    },

    async get(key) {
      const [newest] = (await bucket.find({ filename: key }, { sort: newestFirst, limit: 1 }).toArray()) as MediaFile[];
      if (!newest) return null;
      return {
        body: bucket.openDownloadStream(newest._id),
        contentType: newest.metadata?.contentType ?? 'application/octet-stream',
        size: newest.length,
      };
    },

    async delete(key) {
      await remove(await filesOf(key));
    },

    async close() {
      if (ownsClient) await client.close();
    },
  };
}

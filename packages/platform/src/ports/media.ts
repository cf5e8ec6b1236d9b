import type { Readable } from 'node:stream';

/** The media port: profile pictures and group icons, addressed by a key such as `profile/ab12.png`. */
export interface MediaStore {
  /** Stores the bytes under the key, replacing what was there. */
  put(key: string, body: Buffer | Readable, contentType: string): Promise<void>;
  /** The stored object, or null when the key is unknown. */
  get(key: string): Promise<{ body: Readable; contentType: string; size: number } | null>;
  delete(key: string): Promise<void>;
  close(): Promise<void>;
}

import type { UploadRef } from '@castie/contracts';

type ImageType = UploadRef['contentType'];

/** The image type the first bytes announce (never the file name or the client's word), or null. */
export function sniffImage(head: Buffer): { contentType: ImageType; ext: string } | null {
  if (head.length >= 8 && head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return { contentType: 'image/png', ext: 'png' };
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return { contentType: 'image/jpeg', ext: 'jpg' };
  if (head.length >= 6 && (head.subarray(0, 6).toString('latin1') === 'GIF87a' || head.subarray(0, 6).toString('latin1') === 'GIF89a')) return { contentType: 'image/gif', ext: 'gif' };
  return null;
}

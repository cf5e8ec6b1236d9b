import { DomainError, messages, type UploadRef } from '@castie/contracts';
import { newId, type MediaStore } from '@castie/platform';
import type { FastifyRequest } from 'fastify';
import { sniffImage } from './images.ts';

/** What the multipart reader refused (no boundary, a broken part, too many parts): the client's doing. */
function unreadable(error: unknown): unknown {
  if (error instanceof DomainError) return error;
  const fe = error as { statusCode?: number; code?: string; message?: string };
  if (fe.code === 'FST_REQ_FILE_TOO_LARGE' || fe.statusCode === 413) return error;
  return new DomainError('missing_request_data', `the multipart body could not be read: ${fe.message ?? 'broken form'}`);
}

/** A parsed request body and the media keys this request stored (its own files, nobody else's). */
export interface ReadBody {
  fields: Record<string, unknown>;
  stored: string[];
}

/**
 * The only way to a stored file is a file part that this request brought and the gateway stored:
 * a value of an upload field that came as text (a JSON object, a form string) is refused, so no
 * client can name a stored file (keys are public: they are every `profPic` path). An empty value
 * means "no file", as an empty file input does.
 */
export function withoutClientUploadRefs(fields: Record<string, unknown>, uploadFields: readonly string[], fromMultipart: ReadonlySet<string> = new Set()): Record<string, unknown> {
  for (const name of uploadFields) {
    if (!(name in fields) || fromMultipart.has(name)) continue;
    const value = fields[name];
    if (value === '' || value === null || value === undefined) {
      delete fields[name];
      continue;
    }
    throw new DomainError('missing_request_data', `${name} must be sent as a file, in a multipart/form-data body`);
  }
  return fields;
}

/**
 * Reads a multipart form: text fields become strings (repeated ones lists) and files are checked
 * by their bytes and stored with the media port, becoming UploadRefs. Only the fields the
 * endpoint declares as uploads may carry files, and only as files.
 */
export async function readMultipart(request: FastifyRequest, media: MediaStore, uploadFields: readonly string[], maxBytes: number): Promise<ReadBody> {
  const fields: Record<string, unknown> = {};
  const files = new Set<string>();
  const add = (name: string, value: unknown) => {
    const seen = fields[name];
    fields[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  };
  const stored: string[] = [];
  try {
    await readParts();
    withoutClientUploadRefs(fields, uploadFields, files);
  } catch (error) {
    // A form that fails half-way keeps none of its files.
    await Promise.all(stored.map((key) => media.delete(key).catch(() => undefined)));
    throw error;
  }
  return { fields, stored };

  /** The parts as the client sent them; a body that is not multipart after all is a 400. */
  async function* partsOf() {
    let iterator: ReturnType<ReturnType<FastifyRequest['parts']>[typeof Symbol.asyncIterator]>;
    try {
      iterator = request.parts()[Symbol.asyncIterator]();
    } catch (error) {
      throw unreadable(error);
    }
    for (;;) {
      let next: IteratorResult<Awaited<ReturnType<typeof iterator.next>>['value']>;
      try {
        next = await iterator.next();
      } catch (error) {
        throw unreadable(error);
      }
      if (next.done) return;
      yield next.value;
    }
  }

  async function readParts(): Promise<void> {
    for await (const part of partsOf()) {
      if (part.type === 'field') {
        add(part.fieldname, typeof part.value === 'string' ? part.value : String(part.value));
        continue;
      }
      let bytes: Buffer;
      try {
        bytes = await part.toBuffer();
      } catch (error) {
        if ((error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw new DomainError('invalid_request', `images must be at most ${Math.round(maxBytes / 1024 / 1024)} MB`);
        throw unreadable(error);
      }
      // An empty file input means "no picture".
      if (bytes.length === 0) continue;
      if (!uploadFields.includes(part.fieldname)) throw new DomainError('missing_request_data', `${part.fieldname} does not take a file`);
      if (files.has(part.fieldname)) throw new DomainError('missing_request_data', `${part.fieldname} takes one file`);
      const image = sniffImage(bytes.subarray(0, 16));
      if (!image) throw new DomainError('invalid_request', messages.invalidImage);
      const key = `uploads/${newId()}.${image.ext}`;
      await media.put(key, bytes, image.contentType);
      stored.push(key);
      const ref: UploadRef = { upload: true, key, contentType: image.contentType, size: bytes.length };
      files.add(part.fieldname);
      fields[part.fieldname] = ref;
    }
  }
}

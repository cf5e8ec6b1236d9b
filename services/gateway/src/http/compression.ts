import { isKeptAnswer, ownMemory } from '@castie/platform';
import { Negotiator } from '@fastify/accept-negotiator';
import compressPlugin from '@fastify/compress';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { LRUCache } from 'lru-cache';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

/** Answers smaller than this go as they are: compressing them saves less than it costs. */
const THRESHOLD_BYTES = 1024;
/**
 * Brotli at quality 3: answers are made per viewer and compressed once each, so the server's CPU
 * counts more than the last bytes. Measured on the home page (96 KB) as phones ask for it, both
 * qualities' servers at once, 8 alternated rounds: quality 3 answered 1.18 times the pages of
 * quality 4 (1.08-1.20 per round) for 4 % more bytes (15,189 against 14,583).
 */
const BROTLI_QUALITY = 3;
const ENCODINGS = ['br', 'gzip'] as const;
type Encoding = (typeof ENCODINGS)[number];

/** JSON, HTML and other text (not event streams, which are never whole answers anyway). */
const COMPRESSIBLE = /^(?:text\/(?!event-stream)|application\/(?:[\w.-]+\+)?(?:json|xml|javascript)(?:;|$))/i;
/** `*` (no preference) and `x-gzip` read as gzip, as @fastify/compress reads them. */
const GZIP_ALIASES = /\*|x-gzip/g;

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/** What the answers compressed lately may hold, per encoding (their compressed bytes and the answers they stand for). */
const LATELY_MAX_BYTES = 8 * 1024 * 1024;

/**
 * Kept answers compressed lately, by encoding: a kept answer asked again is compressed once. A
 * page a user asks for again while nothing changed is the very Buffer the service kept and gave
 * them before (RepeatedAnswers, handed over as it is in this process), and compressing it
 * (brotli, about 1 ms for a 90 KB home page) cost more than the rest of its answer. Compression
 * is a function of the bytes alone, so the compressed bytes are right for whoever is given the
 * same kept answer. Other answers are made once and dropped, so they are compressed each time and
 * not kept here. A compressed answer kept is in memory of its own (`ownMemory`).
 */
function compressedLately() {
  const made = () => new LRUCache<Buffer, Buffer>({ maxSize: LATELY_MAX_BYTES, maxEntrySize: LATELY_MAX_BYTES / 8, sizeCalculation: (compressed, answer) => compressed.length + answer.buffer.byteLength });
  const lately: Record<Encoding, LRUCache<Buffer, Buffer>> = { br: made(), gzip: made() };
  const compress = (encoding: Encoding, payload: string | Buffer, bytes: number): Promise<Buffer> => (encoding === 'br' ? brotli(payload, brotliOptions(bytes)) : gzipped(payload));
  return async (encoding: Encoding, payload: string | Buffer, bytes: number): Promise<Buffer> => {
    if (typeof payload === 'string' || !isKeptAnswer(payload)) return compress(encoding, payload, bytes);
    const known = lately[encoding].get(payload);
    if (known) return known;
    const compressed = ownMemory(await compress(encoding, payload, bytes));
    lately[encoding].set(payload, compressed);
    return compressed;
  };
}

/**
 * Compressed answers (brotli or gzip) for clients that ask with Accept-Encoding: JSON, HTML and
 * other text of 1 KiB or more; smaller answers and images (already compressed) go as they are.
 * Request bodies are not decompressed: clients send forms, JSON and uploads as they are, and a
 * compressed body would only be a way around the body size limits.
 *
 * Whole answers (a string or a Buffer: every answer forwarded from a service, the API document,
 * the docs page) are compressed here, in one call that runs on libuv's thread pool, so the event
 * loop only hands the bytes over. @fastify/compress, registered after this hook, pipes each
 * answer through a stream instead (Readable.from over the payload, pump, a zlib stream), and on
 * the home page (96 KB, the answer phones ask for most, always with Accept-Encoding) that
 * machinery cost the server three times the compression itself: 256 pages/s with brotli against
 * 866 without compression, while compressing the page once takes 0.9 ms. It still serves what
 * comes as a stream (the own-data export); an answer this hook compressed carries its
 * Content-Encoding, which it leaves alone. Both negotiate the same way (same encodings, aliases
 * and threshold) and both honour a route's `compress: false`. This hook's answers carry their
 * exact Content-Length (the library's went chunked), and it compresses the not-found answer too,
 * which the library, attached route by route, never saw.
 */
export const compression = fp(
  async (app: FastifyInstance) => {
    const negotiator = new Negotiator<Encoding>({ supportedValues: [...ENCODINGS] });
    const compress = compressedLately();
    // A callback hook: most answers go on as they are, without a promise of their own.
    app.addHook('onSend', (request, reply, payload, done) => {
      if (request.headers['accept-encoding'] === undefined || (typeof payload !== 'string' && !Buffer.isBuffer(payload))) return done(null, payload);
      // Counting a string's UTF-8 bytes reads all of it: only for clients that ask to compress.
      const bytes = Buffer.byteLength(payload);
      const encoding = bytes < THRESHOLD_BYTES ? null : wanted(request, reply, negotiator);
      if (!encoding) return done(null, payload);
      compress(encoding, payload, bytes)
        .then((compressed) => {
          varyOnEncoding(reply);
          reply.header('content-encoding', encoding);
          reply.removeHeader('content-length');
          return compressed;
        })
        .then(
          (compressed) => done(null, compressed),
          (error: unknown) => done(error instanceof Error ? error : new Error(`compressing the answer failed: ${String(error)}`)),
        );
    });
    // Runs before the plugin's own onRoute hook (registered below), which reads this.
    app.addHook('onRoute', (route) => {
      route.decompress ??= false;
      // A route that opts out (pictures, already compressed) is left alone by this hook too.
      if (route.compress === false) route.config = { ...route.config, compressed: false };
    });
    await app.register(compressPlugin, { global: true, encodings: [...ENCODINGS], threshold: THRESHOLD_BYTES });
  },
  { name: 'castie-compression' },
);

/** The encoding to compress a whole answer with, or null to send it as it is. */
function wanted(request: FastifyRequest, reply: FastifyReply, negotiator: Negotiator<Encoding>): Encoding | null {
  const accepted = request.headers['accept-encoding'];
  if (typeof accepted !== 'string' || request.headers['x-no-compression'] !== undefined || request.routeOptions.config.compressed === false) return null;
  const current = reply.getHeader('content-encoding');
  if (current !== undefined && current !== 'identity') return null;
  if (!COMPRESSIBLE.test(String(reply.getHeader('content-type') ?? 'application/json'))) return null;
  return negotiator.negotiate(accepted.toLowerCase().replace(GZIP_ALIASES, 'gzip'));
}

/**
 * Brotli's window fits the answer: the encoder allocates for its window whatever the size hint
 * says, and with the default (4 MiB) several answers compressed at once cost 2.5 times the CPU
 * each (measured at quality 4: 96 KB home pages, four at a time, 2.98 ms of CPU each; with a
 * 256 KiB window 1.19 ms, the same 14,312 bytes out). A window as large as the answer loses
 * nothing.
 */
function brotliOptions(bytes: number) {
  const window = Math.min(constants.BROTLI_DEFAULT_WINDOW, Math.max(constants.BROTLI_MIN_WINDOW_BITS, Math.ceil(Math.log2(bytes + 16))));
  return { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_LGWIN]: window, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT, [constants.BROTLI_PARAM_SIZE_HINT]: bytes } };
}

/** Caches must keep one copy per Accept-Encoding. */
function varyOnEncoding(reply: FastifyReply): void {
  const vary = reply.getHeader('vary');
  if (vary === undefined) reply.header('vary', 'accept-encoding');
  else if (!String(vary).toLowerCase().includes('accept-encoding')) reply.header('vary', `${String(vary)}, accept-encoding`);
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** False on routes declared with `compress: false` (set by this plugin, read by its hook). */
    compressed?: boolean;
  }
}

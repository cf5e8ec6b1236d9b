import { z } from 'zod';

/**
 * Form values arrive as strings (x-www-form-urlencoded, multipart) or as JSON values. These
 * schemas accept both, the way clients of the original app send them.
 */

const TRUE = new Set(['true', 'True', 'TRUE', '1', 'on', 'yes']);
const FALSE = new Set(['false', 'False', 'FALSE', '0', 'off', 'no', '']);

/** A boolean sent as true/false/True/False/1/0/on (or a JSON boolean). */
export const formBoolean = z.preprocess((v) => {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string') {
    const s = v.trim();
    if (TRUE.has(s)) return true;
    if (FALSE.has(s)) return false;
  }
  return v;
}, z.boolean({ error: 'must be true or false' }));

/** An integer sent as a string or a JSON number. */
export const formInt = z.preprocess((v) => (typeof v === 'string' && /^\s*-?\d+\s*$/.test(v) ? Number(v) : v), z.number({ error: 'must be an integer' }).int());

/** A value that may be sent once or repeated (`groups=a&groups=b`); always a list after parsing. */
export const repeated = <T extends z.ZodType>(item: T) => z.preprocess((v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]), z.array(item));

/** A required text field; trimmed. */
export const text = () => z.string({ error: 'is required' }).trim();

/**
 * An uploaded file as the gateway forwards it: the gateway has checked the bytes and stored them
 * with the media port; services receive where it is.
 */
export const UploadRefSchema = z.object({
  upload: z.literal(true),
  /** Media key, e.g. `uploads/3f2a….png`; served at `/media/<key>`. */
  key: z.string().min(1),
  contentType: z.enum(['image/png', 'image/jpeg', 'image/gif']),
  size: z.number().int().nonnegative(),
});
export type UploadRef = z.infer<typeof UploadRefSchema>;

/** Public address of a stored media key, as responses show it (a relative path). */
export const mediaPath = (key: string): string => `/media/${key}`;

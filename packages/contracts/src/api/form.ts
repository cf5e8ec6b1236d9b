import { z } from 'zod';

/**
 * Form values arrive as strings (x-www-form-urlencoded, multipart) or as JSON values. These
 * schemas accept both, the way clients of the original app send them.
 */

const TRUE = new Set(['true', 'True', 'TRUE', '1', 'on']);
const FALSE = new Set(['false', 'False', 'FALSE', '0', 'off']);

/**
 * A boolean sent as true/false/True/False/1/0/on/off (decisions.md), or a JSON boolean, or the
 * JSON numbers 1 and 0. Anything else (an empty string, 123, 1.5, "yes") is refused.
 */
export const formBoolean = z.preprocess((v) => {
  if (typeof v === 'boolean') return v;
  if (v === 1 || v === 0) return v === 1;
  if (typeof v === 'string') {
    if (TRUE.has(v)) return true;
    if (FALSE.has(v)) return false;
  }
  return v;
}, z.boolean({ error: 'must be true or false' })).meta({ description: 'true or false; forms may also send True, False, 1, 0, on or off' });

/** An integer sent as a string or a JSON number. */
export const formInt = z.preprocess((v) => (typeof v === 'string' && /^\s*-?\d+\s*$/.test(v) ? Number(v) : v), z.number({ error: 'must be an integer' }).int());

/** A value that may be sent once or repeated (`groups=a&groups=b`); always a list after parsing. */
export const repeated = <T extends z.ZodType>(item: T) => z.preprocess((v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]), z.array(item));

/** A required text field; trimmed. */
export const text = () => z.string({ error: 'is required' }).trim();

/** Control characters (C0 and DEL): never in one-line values; in paragraphs, only tab, CR and LF pass. */
const hasControl = (s: string, allowed: ReadonlySet<number>): boolean => {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c < 0x20 || c === 0x7f) && !allowed.has(c)) return true;
  }
  return false;
};
const IN_LINE = new Set<number>();
const IN_PARAGRAPH = new Set([0x09, 0x0a, 0x0d]);

/** Text limits of the second version (decisions.md), in characters. */
export const textLimits = {
  forecastText: 200,
  keyword: 200,
  answerOption: 200,
  answerOptions: 20,
  name: 50,
  place: 100,
  groupText: 2000,
  searchQuery: 200,
  passwordMin: 4,
  passwordMax: 256,
} as const;

/** The refinement below as a JSON Schema pattern, so the API document shows it. */
const NO_CONTROL_IN_LINE = '^[^\\u0000-\\u001f\\u007f]*$';
const NO_CONTROL_IN_PARAGRAPH = '^[^\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f]*$';

const bounded = (max: number, allowed: ReadonlySet<number>) =>
  z
    .string()
    .max(max, `must have at most ${max} characters`)
    .refine((s) => !hasControl(s, allowed), 'must not contain control characters')
    .meta({ pattern: allowed === IN_LINE ? NO_CONTROL_IN_LINE : NO_CONTROL_IN_PARAGRAPH });

/** One line of text (a name, an answer option, a search): trimmed, at most `max` characters, no control characters. */
export const line = (max: number) => text().pipe(bounded(max, IN_LINE));

/** Text that may have several lines (a question, a comment, a group's texts): line breaks allowed, other control characters not. */
export const paragraph = (max: number) => text().pipe(bounded(max, IN_PARAGRAPH));

/** A password: 4 to 256 characters as typed (not trimmed), no control characters. */
export const passwordText = () =>
  z
    .string({ error: 'is required' })
    .min(textLimits.passwordMin, `must have at least ${textLimits.passwordMin} characters`)
    .max(textLimits.passwordMax, `must have at most ${textLimits.passwordMax} characters`)
    .refine((s) => !hasControl(s, IN_LINE), 'must not contain control characters')
    .meta({ pattern: NO_CONTROL_IN_LINE });

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

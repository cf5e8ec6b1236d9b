import { z } from 'zod';

/**
 * Paging of the lists beyond the home tabs and searches (decisions.md, issue 13). Both parameters
 * are optional: without them a list answers whole, exactly as the spec shows it; with either, it
 * answers at most `limit` items and says whether more exist.
 */
export const listPaging = {
  limitMax: 100,
  limitDefault: 100,
} as const;

const integer = (v: unknown) => (typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : v);

/**
 * The query of a paged list. `before` is the `next_before` of the previous page, `<key>|<id>` of
 * its last item (the list's order key and the id breaking ties); clients treat it as opaque.
 */
export const listPageQuery = {
  limit: z
    .preprocess(integer, z.number().int().min(1).max(listPaging.limitMax))
    .optional()
    .meta({ description: `Page size, 1 to ${listPaging.limitMax}; sending it (or before) pages the list (default ${listPaging.limitDefault} with before alone).` }),
  before: z
    .string()
    .min(3)
    .max(300)
    .regex(/^[^|]+\|[^|]+$/, 'must be the next_before of a previous page')
    .optional()
    .meta({ description: 'The next_before of the previous page; the page starts after that item.' }),
};

/** What a paged answer adds (absent when the request did not page). */
export const listPageInfo = {
  has_more: z.boolean().optional().meta({ description: 'Only on paged requests: true when another page follows.' }),
  next_before: z.string().nullable().optional().meta({ description: 'Only on paged requests: the before of the next page; null on the last page.' }),
};

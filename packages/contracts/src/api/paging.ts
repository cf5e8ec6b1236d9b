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

const pageLimit = z
  .preprocess(integer, z.number().int().min(1).max(listPaging.limitMax))
  .optional()
  .meta({ description: `Page size, 1 to ${listPaging.limitMax}; sending it (or before) pages the list (default ${listPaging.limitDefault} with before alone).` });

const cursor = (pattern: RegExp, key: string) =>
  z
    .string()
    .min(3)
    .max(300)
    .regex(pattern, 'must be the next_before of a previous page')
    .optional()
    .meta({ description: `The next_before of the previous page (${key}|id of its last item); the page starts after that item.` });

/**
 * The query of a paged list whose order key is text (a name). `before` is the `next_before` of
 * the previous page, `<key>|<id>` of its last item (the order key and the id breaking ties);
 * clients treat it as opaque.
 */
export const listPageQuery = { limit: pageLimit, before: cursor(/^.*\|[^|]+$/, 'name') };

/** The query of a paged list ordered by an instant: `before` is `<ISO instant>|<id>`. */
export const instantPageQuery = { limit: pageLimit, before: cursor(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z\|[^|]+$/, 'ISO instant') };

/** What a paged answer adds (absent when the request did not page). */
export const listPageInfo = {
  has_more: z.boolean().optional().meta({ description: 'Only on paged requests: true when another page follows.' }),
  next_before: z.string().nullable().optional().meta({ description: 'Only on paged requests: the before of the next page; null on the last page.' }),
};

/** The leaderboard's paging (rank order has no stable key to resume after): `offset` skips that many entries. */
export const offsetPageQuery = {
  offset: z
    .preprocess(integer, z.number().int().min(0).max(1_000_000))
    .optional()
    .meta({ description: 'Entries to skip (the next_offset of the previous page); sending it pages the board (overall or of a group).' }),
};
export const offsetPageInfo = {
  has_more: z.boolean().optional().meta({ description: 'Only on paged requests: true when more entries follow.' }),
  next_offset: z.number().int().nullable().optional().meta({ description: 'Only on paged requests: the offset of the next page; null on the last page.' }),
};

import type { TestResponse } from './harness.ts';

/** One page as a test reads it: the ids of its items in order and the paging fields. */
export interface SeenPage {
  ids: string[];
  hasMore: boolean;
  nextBefore: string | null;
}

/**
 * Walks a paged list to its end, calling `between` after every page (writes that add items at the
 * head must not shift later pages). Returns every id seen, in order, and the pages.
 */
export async function walkPages(fetch: (before: string | null) => Promise<TestResponse>, read: (body: Record<string, unknown>) => string[], between: (pageIndex: number) => Promise<void> = async () => {}): Promise<{ ids: string[]; pages: SeenPage[] }> {
  const pages: SeenPage[] = [];
  let before: string | null = null;
  for (let i = 0; i < 100; i++) {
    const res = await fetch(before);
    if (res.status !== 200) throw new Error(`page ${i} answered ${res.status}: ${res.text}`);
    const page = { ids: read(res.body), hasMore: res.body.has_more as boolean, nextBefore: res.body.next_before as string | null };
    pages.push(page);
    if (!page.hasMore) break;
    before = page.nextBefore;
    await between(i);
  }
  return { ids: pages.flatMap((p) => p.ids), pages };
}

/** The query string of a page: `?limit=n` and, after the first page, `&before=`. */
export const pageQuery = (limit: number, before: string | null, extra = ''): string => `?limit=${limit}${before ? `&before=${encodeURIComponent(before)}` : ''}${extra}`;

/** Requests a paged list must refuse with 400 missing_request_data (limit out of 1..100, malformed before). */
export const badPagingQueries = ['?limit=0', '?limit=101', '?limit=ten', '?before=nobar', '?before=not-a-key%7Cnot-an-id', '?limit=5&before=%7C'] as const;

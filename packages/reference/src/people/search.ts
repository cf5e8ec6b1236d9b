import { DomainError, socialRules } from '@castie/contracts';
import type { Collection, Filter } from '@castie/platform';
import type { PersonDoc } from './people-projection.ts';

/** Where a page ends in the search order (last name, handle, id); opaque to clients. */
interface Cursor {
  lastNameLower: string;
  handleLower: string;
  id: string;
}

export const encodeCursor = (p: Pick<PersonDoc, '_id' | 'lastNameLower' | 'handleLower'>): string => Buffer.from(JSON.stringify([p.lastNameLower, p.handleLower, p._id])).toString('base64url');

export function decodeCursor(before: string): Cursor {
  try {
    const value: unknown = JSON.parse(Buffer.from(before, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 3 && value.every((v) => typeof v === 'string')) {
      const [lastNameLower, handleLower, id] = value as [string, string, string];
      return { lastNameLower, handleLower, id };
    }
  } catch {
    // fall through: not one of ours
  }
  throw new DomainError('missing_request_data', 'before must be the next_before of a previous page');
}

const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The words of a query: each must match the handle, first or last name (case-insensitive, anywhere). */
export function queryWords(q: string): string[] {
  return q.trim().split(/\s+/).filter(Boolean).slice(0, socialRules.searchWordsMax);
}

/**
 * One page of active people matching every word, in last-name order, after `before`. Inactive
 * people never match. Asks for one more than the page to know whether more exist.
 */
export async function searchPeople(people: Collection<PersonDoc>, q: string, page: { limit: number; before?: string | undefined }): Promise<{ found: PersonDoc[]; hasMore: boolean; nextBefore: string | null }> {
  const words = queryWords(q);
  if (words.length === 0) return { found: [], hasMore: false, nextBefore: null };
  const and: Filter<PersonDoc>[] = words.map((w) => {
    const match = { $regex: escapeRegex(w), $options: 'i' };
    return { $or: [{ handle: match }, { firstName: match }, { lastName: match }] };
  });
  if (page.before !== undefined) {
    const c = decodeCursor(page.before);
    and.push({
      $or: [
        { lastNameLower: { $gt: c.lastNameLower } },
        { lastNameLower: c.lastNameLower, handleLower: { $gt: c.handleLower } },
        { lastNameLower: c.lastNameLower, handleLower: c.handleLower, _id: { $gt: c.id } },
      ],
    });
  }
  const rows = await people.find({ status: 'active', $and: and }, { sort: { lastNameLower: 1, handleLower: 1, _id: 1 }, limit: page.limit + 1 });
  const found = rows.slice(0, page.limit);
  const hasMore = rows.length > page.limit;
  return { found, hasMore, nextBefore: hasMore ? encodeCursor(found[found.length - 1]!) : null };
}

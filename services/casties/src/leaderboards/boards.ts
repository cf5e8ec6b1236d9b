import type { Collection, SortedSets } from '@castie/platform';
import type { People, PersonDoc } from '@castie/reference';
import { groupBoard, OVERALL_BOARD, rankedBoard, userOfMember, type BoardEntryDoc } from './read-model.ts';

/** One place on a board: who, and the XP it is ranked by (overall XP, or group XP). */
export interface Standing {
  person: PersonDoc;
  xp: number;
}

/**
 * The leaderboards and group rankings, read from the sorted sets the leaderboards projection
 * keeps: a page of a board is one rank range plus the people on it by id, whatever the number
 * of people ranked. Order: most XP first, equal XP by lowercased handle (see read-model.ts).
 */
export class Leaderboards {
  constructor(
    private readonly sets: SortedSets,
    private readonly entries: Collection<BoardEntryDoc>,
    private readonly people: Pick<People, 'activeByIds'>,
  ) {}

  /** The overall leaderboard: active people by XP, from `offset`, at most `limit`. */
  overall(limit: number, offset = 0): Promise<Standing[]> {
    return this.page(OVERALL_BOARD, limit, offset);
  }

  /** A group's leaderboard: its active followers by group XP (0 before any answered Castie), from `offset`, at most `limit`. */
  group(slug: string, limit: number, offset = 0): Promise<Standing[]> {
    return this.page(groupBoard(slug), limit, offset);
  }

  /**
   * A user's position by group XP among the group's active followers with at least one forecast
   * on an answered Castie of the group (decisions.md), from 1; 0 when unranked.
   */
  async ranking(slug: string, userId: string): Promise<{ ranking: number; totalRanked: number }> {
    const key = rankedBoard(slug);
    const [entry, totalRanked] = await Promise.all([this.entries.findOne({ _id: userId }), this.sets.size(key)]);
    const rank = entry ? await this.sets.rankOf(key, entry.member) : null;
    return { ranking: rank === null ? 0 : rank + 1, totalRanked };
  }

  private async page(key: string, limit: number, offset: number): Promise<Standing[]> {
    const ranked = await this.sets.ranked(key, offset, limit);
    const people = await this.people.activeByIds(ranked.map((r) => userOfMember(r.member)));
    // A person deleted a moment ago may still be on the board until the projection applies it.
    return ranked.flatMap((r) => {
      const person = people.get(userOfMember(r.member));
      return person ? [{ person, xp: r.score }] : [];
    });
  }
}

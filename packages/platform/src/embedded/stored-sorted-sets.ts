import type { SortedSets } from '../ports/cache.ts';
import { collectionSpec, type Collections, type Doc, type DocumentStore } from '../ports/document-store.ts';

/** One member of one sorted set. `_id` names both unambiguously (see `memberId`). */
interface SortedSetMemberDoc extends Doc {
  key: string;
  member: string;
  score: number;
}

/** The (key, score descending, member) index serves rank ranges, ranks (counts over a range) and sizes. */
const SORTED_SET_MEMBERS = collectionSpec<SortedSetMemberDoc>({ name: 'sorted_set_members', indexes: [{ keys: { key: 1, score: -1, member: 1 } }] });

const memberId = (key: string, member: string): string => `${key.length}:${key}${member}`;

/**
 * The sorted sets of the embedded profile, in the service's read-model store (SQLite): persisted
 * with the read models, so a restart finds the boards as the last committed batch left them (no
 * replay, no loading), and written in the projection's unit of work, so a board commits with the
 * checkpoint of the events that changed it. Members compare in byte order as SQLite's BINARY
 * collation does (the port's rank order). A rank is a count over an index range, so it costs in
 * proportion to the rank (Redis: the logarithm); boards of thousands answer in well under a millisecond.
 */
export function createStoredSortedSets(store: DocumentStore): SortedSets {
  const members = store.collection(SORTED_SET_MEMBERS);
  return {
    async setScores(changes, unit) {
      const apply = async (within: Collections) => {
        const written = within.collection(SORTED_SET_MEMBERS);
        for (const { key, member, score } of changes) {
          const _id = memberId(key, member);
          if (score === null) await written.deleteOne({ _id });
          else await written.replaceOne({ _id }, { _id, key, member, score }, { upsert: true });
        }
      };
      // In a projection's batch the changes join its unit; alone they are a unit of their own.
      if (unit) await apply(unit);
      else await store.transaction(apply);
    },
    async ranked(key, offset, limit) {
      if (limit <= 0) return [];
      const docs = await members.find({ key }, { sort: { score: -1, member: 1 }, ...(offset > 0 ? { skip: offset } : {}), limit });
      return docs.map((d) => ({ member: d.member, score: d.score }));
    },
    async rankOf(key, member) {
      const doc = await members.findOne({ _id: memberId(key, member) });
      if (!doc) return null;
      const [above, tiedBefore] = await Promise.all([members.countDocuments({ key, score: { $gt: doc.score } }), members.countDocuments({ key, score: doc.score, member: { $lt: member } })]);
      return above + tiedBefore;
    },
    size(key) {
      return members.countDocuments({ key });
    },
    async dropSortedSets(prefix) {
      // Keys under a prefix are one range of the index: from the prefix to just past it.
      await members.deleteMany({ key: { $gte: prefix, $lt: `${prefix}\u{10FFFF}` } });
    },
  };
}

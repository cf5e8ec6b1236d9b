import { CASTIES_TOPIC, type CastieEvent } from '@castie/contracts';
import { collectionSpec, type Doc, type Projection } from '@castie/platform';

/** The search index of one Castie, apart from its view so that feeds never carry it. */
export interface SearchDoc extends Doc {
  /** Prefixes of the question's words. */
  terms: string[];
  groupSlug: string;
  createdAt: string;
}

/** Indexes: each term (multikey); all by creation, newest first (search results' order). */
export const CASTIE_SEARCH = collectionSpec<SearchDoc>({ name: 'castie_search', arrays: ['terms'], indexes: [{ keys: { terms: 1 } }, { keys: { createdAt: -1, _id: -1 } }] });

/** Lower-case words of a text (letters and digits of any script). */
export const wordsOf = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
const TERM_MIN = 2;
const TERM_MAX = 16;
/** Every prefix (2 to 16 characters) of every word: a query word matches words it begins. */
export function termsOf(text: string): string[] {
  const terms = new Set<string>();
  for (const word of wordsOf(text)) for (let n = TERM_MIN; n <= Math.min(word.length, TERM_MAX); n++) terms.add(word.slice(0, n));
  return [...terms];
}
/** The search keys of a query: its words, cut to the longest indexed prefix; short words are ignored. */
export const queryTerms = (q: string): string[] => [...new Set(wordsOf(q).filter((w) => w.length >= TERM_MIN).map((w) => w.slice(0, TERM_MAX)))];

/** The Castie search index, fed by CastieCreated. */
export function searchIndexProjection(): Projection {
  return {
    name: 'castie-search',
    version: 1,
    topics: [CASTIES_TOPIC],
    collections: [CASTIE_SEARCH],
    async apply(event, _envelope, _record, unit) {
      const e = event as CastieEvent;
      if (e.type !== 'CastieCreated') return;
      const search = unit.collection(CASTIE_SEARCH);
      const d = e.data;
      await search.replaceOne({ _id: d.castieId }, { _id: d.castieId, terms: termsOf(d.question), groupSlug: d.groupSlug, createdAt: d.createdAt }, { upsert: true });
    },
  };
}

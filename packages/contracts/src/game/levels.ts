/**
 * The game's tables, in one place (decisions.md): points for a correct forecast, levels from XP,
 * and the two-part title (adjective by level band, noun by accuracy band).
 */

/** Points for a correct forecast: being right against the crowd pays. `share` is in [0, 1]. */
export function pointsFor(share: number): number {
  return 10 + Math.round(90 * (1 - share));
}

/** Level 1 at 0 XP; level n needs 100 × (1 + 2 + … + (n − 1)) XP: 100, 300, 600, 1000, … */
export function levelFor(xp: number): number {
  let level = 1;
  while (xp >= (100 * level * (level + 1)) / 2) level += 1;
  return level;
}

/** XP needed to reach a level. */
export const xpForLevel = (level: number): number => (100 * (level - 1) * level) / 2;

/** Adjective by level band: [from level, adjective]. */
const adjectives: readonly [number, string][] = [
  [1, 'rookie'],
  [3, 'promising'],
  [5, 'seasoned'],
  [8, 'shrewd'],
  [12, 'masterful'],
  [17, 'legendary'],
];

/** Noun by accuracy band (percent correct): [from percent, noun]. */
const nouns: readonly [number, string][] = [
  [0, 'benchwarmer'],
  [20, 'guesser'],
  [40, 'forecaster'],
  [60, 'analyst'],
  [75, 'oracle'],
  [90, 'prophet'],
];

const pick = (table: readonly [number, string][], value: number): string => {
  let found = table[0]![1];
  for (const [from, word] of table) if (value >= from) found = word;
  return found;
};

/** The ranking title of a person, e.g. { adjective: 'rookie', noun: 'benchwarmer' }. */
export function titleFor(level: number, percentCorrect: number): { adjective: string; noun: string } {
  return { adjective: pick(adjectives, level), noun: pick(nouns, percentCorrect) };
}

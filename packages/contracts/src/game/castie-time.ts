/**
 * When a Castie has ended, may be answered, waits for its answer: the rules of decisions.md
 * ("Game rules"), written once for the write side (deciders, with the time carried by each
 * command) and every read model (with the clock at read time). "Ended" is never stored: it follows
 * from the end instant and the clock, so it is right at every read without a timer.
 */
export interface CastieTimes {
  /** Closing instant (ISO 8601); null for open-ended Casties. */
  endsAt: string | null;
  /** True once the creator entered the correct answer. */
  answered: boolean;
}

/** True once the end instant has passed (never for open-ended Casties). */
export const closedByTime = (endsAt: string | null, now: Date): boolean => endsAt !== null && Date.parse(endsAt) <= now.getTime();

/** True once the Castie accepts no more forecasts: its end passed, or it was answered. */
export const castieEnded = (c: CastieTimes, now: Date): boolean => c.answered || closedByTime(c.endsAt, now);

/** `is_answerable`: not answered, and ended by time or open-ended. */
export const castieAnswerable = (c: CastieTimes, now: Date): boolean => !c.answered && (c.endsAt === null || closedByTime(c.endsAt, now));

/**
 * The instant (ms since the epoch) after `now` at which time alone next changes `castieEnded` and
 * `castieAnswerable`: the end, while it is ahead and no answer came; null when time changes
 * neither any more. What is shown of a Castie can be kept until then.
 */
export function castieChangesByTimeAt(c: CastieTimes, now: Date): number | null {
  if (c.answered || c.endsAt === null) return null;
  const end = Date.parse(c.endsAt);
  return end > now.getTime() ? end : null;
}

/**
 * The read-model filter of a creator's Casties that wait for an answer: an end date that passed
 * and no answer (open-ended Casties never "need" one). The same rule as `closedByTime`, as a query.
 */
export const needsAnswerFilter = (creatorId: string, now: Date) => ({ creatorId, answered: false, endsAt: { $ne: null, $lte: now.toISOString() } }) as const;

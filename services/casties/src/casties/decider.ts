import { castieAnswerable, castieEnded, castieRules, DomainError, instantOf, pointsFor, type CastieEvent } from '@castie/contracts';
import type { Decider } from '@castie/platform';

/** What the write side knows of a Castie: enough to decide forecasts, answers and reports. */
export interface CastieFacts {
  castieId: string;
  groupSlug: string;
  creatorId: string;
  question: string;
  allowWriteIn: boolean;
  options: { answerId: number; text: string }[];
  /** Closing instant (ISO); null for open-ended Casties. */
  endsAt: string | null;
  reporters: string[];
}

/**
 * A Castie's life, stream `castie-<uuid>`: created open, answered once by its creator. "Ended" is
 * not a state: it is derived from `endsAt` and the time carried by each command (or, for
 * open-ended Casties, from being answered), so it is right at every read without a timer.
 */
export type CastieState =
  | { status: 'none' }
  | { status: 'open'; castie: CastieFacts }
  | {
      status: 'answered';
      castie: CastieFacts;
      correctAnswerId: number | null;
      correctText: string;
      /** How many forecasts the answer scored, and how many of them correct (the share of forecasts scored late counts them). */
      scoredCount: number;
      correctCount: number;
      /** Whose forecasts were scored after the answer (ForecastsScored): usually nobody. */
      lateScored: readonly string[];
    };

/** One forecast as the answer scores it (gathered from the forecasts read model by the handler). */
export interface ScoredForecast {
  userId: string;
  forecastId: number;
  answerId: number | null;
  text: string;
}

export type CastieCommand =
  | {
      type: 'CreateCastie';
      castieId: string;
      creatorId: string;
      groupSlug: string;
      /** What the group directory says about the group and the creator, looked up by the handler. */
      group: { exists: boolean; mayCreate: boolean };
      pollType: 'Open' | 'Regular';
      closesOnDate: string | undefined;
      closesOnTime: string | undefined;
      timeZone: string;
      question: string;
      showUsername: boolean;
      allowWriteIn: boolean;
      /** Option texts with the integer ids the handler drew for them. */
      options: { answerId: number; text: string }[];
      now: Date;
    }
  | { type: 'AnswerCastie'; userId: string; answerId: string | number | undefined; keyword: string | undefined; forecasts: readonly ScoredForecast[]; now: Date }
  /**
   * Forecasts the answer's scores left out, as late-forecasts-policy.ts found them (it leaves out
   * those the answer scored): those not scored late already are scored now.
   */
  | { type: 'ScoreLateForecasts'; forecasts: readonly ScoredForecast[] }
  | { type: 'ReportCastie'; reporterId: string };

const notCreated = (message: string) => new DomainError('castie_not_created', message);
const notAnswerable = (message: string) => new DomainError('castie_not_answerable', message);

/** True once the Castie accepts no more forecasts (contracts' castieEnded, at the command's time). */
export function isEnded(state: CastieState, now: Date): boolean {
  return state.status !== 'none' && castieEnded({ endsAt: state.castie.endsAt, answered: state.status === 'answered' }, now);
}

/** Write-in correctness (decisions.md): the trimmed forecast contains the trimmed keyword, any case. */
export const writeInMatches = (text: string, keyword: string): boolean => text.trim().toLowerCase().includes(keyword.trim().toLowerCase());

/** Parses an answer id sent as a form string or a JSON number; null when it is not an integer. */
export function parseAnswerId(raw: string | number | undefined): number | null | undefined {
  if (raw === undefined || (typeof raw === 'string' && raw.trim() === '')) return undefined;
  const n = typeof raw === 'number' ? raw : /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : NaN;
  return Number.isSafeInteger(n) ? n : null;
}

function create(command: Extract<CastieCommand, { type: 'CreateCastie' }>): CastieEvent[] {
  if (!command.group.exists) throw notCreated(`the group ${command.groupSlug} does not exist`);
  if (!command.group.mayCreate) throw notCreated(`you may not create Casties in the group ${command.groupSlug}: follow it first (or ask its admins to name you a creator)`);
  if (command.question.trim() === '') throw notCreated('the question must not be empty');

  let endsAt: Date | null = null;
  let endDate: string | null = null;
  let endTime: string | null = null;
  if (command.pollType === 'Regular') {
    const date = command.closesOnDate?.trim() ?? '';
    const time = command.closesOnTime?.trim() ?? '';
    if (!date || !time) throw notCreated('a Regular poll needs closes_on_date (YYYY-MM-DD) and closes_on_time (HH:MM)');
    endsAt = instantOf(date, time, command.timeZone);
    if (!endsAt) throw notCreated(`the closing date and time ${date} ${time} are not a valid date (YYYY-MM-DD) and 24-hour time (HH:MM) in ${command.timeZone} (a time its clocks skip never happens)`);
    if (endsAt.getTime() <= command.now.getTime()) throw notCreated('the closing date and time are in the past: a Castie must close in the future');
    const [h, m] = time.split(':');
    endDate = date;
    endTime = `${h!.padStart(2, '0')}:${m}`;
  }

  if (!command.allowWriteIn) {
    if (command.options.length < castieRules.minOptions) throw notCreated(`a Castie with set answer options needs at least ${castieRules.minOptions} non-empty answer options`);
    if (command.options.length > castieRules.optionsMax) throw notCreated(`a Castie can have at most ${castieRules.optionsMax} answer options`);
    const long = command.options.find((o) => o.text.length > castieRules.optionMax);
    if (long) throw notCreated(`answer options must have at most ${castieRules.optionMax} characters`);
    const seen = new Set(command.options.map((o) => o.text.toLowerCase()));
    if (seen.size !== command.options.length) throw notCreated('the answer options must all be different');
  }

  return [
    {
      type: 'CastieCreated',
      data: {
        castieId: command.castieId,
        groupSlug: command.groupSlug,
        creatorId: command.creatorId,
        question: command.question.trim(),
        showUsername: command.showUsername,
        allowWriteIn: command.allowWriteIn,
        options: command.allowWriteIn ? [] : command.options,
        endsAt: endsAt ? endsAt.toISOString() : null,
        endDate,
        endTime,
        createdAt: command.now.toISOString(),
      },
    },
  ];
}

function answer(command: Extract<CastieCommand, { type: 'AnswerCastie' }>, state: CastieState): CastieEvent[] {
  if (state.status === 'none') throw new DomainError('object_not_found', 'the requested castie could not be found. make sure you are sending a valid uuid');
  const { castie } = state;
  if (castie.creatorId !== command.userId) throw notAnswerable('only the creator of a Castie can answer it');
  if (state.status === 'answered') throw notAnswerable('this castie has already been answered');
  if (!castieAnswerable({ endsAt: castie.endsAt, answered: false }, command.now)) throw notAnswerable('this castie has not ended yet: it can be answered once its end date/time has passed');

  let correctAnswerId: number | null = null;
  let correctText: string;
  let isCorrect: (f: ScoredForecast) => boolean;
  if (castie.allowWriteIn) {
    const keyword = command.keyword?.trim() ?? '';
    if (!keyword) throw new DomainError('missing_request_data', 'keyword was not sent in request');
    correctText = keyword;
    isCorrect = (f) => writeInMatches(f.text, keyword);
  } else {
    const id = parseAnswerId(command.answerId);
    if (id === undefined) throw new DomainError('missing_request_data', 'answer_id was not sent in request');
    const option = castie.options.find((o) => o.answerId === id);
    if (!option) throw notAnswerable('the answer_id provided does not correspond to a valid answer option for this castie');
    correctAnswerId = option.answerId;
    correctText = option.text;
    isCorrect = (f) => f.answerId === option.answerId;
  }

  return [
    {
      type: 'CastieAnswered',
      data: { castieId: castie.castieId, groupSlug: castie.groupSlug, correctAnswerId, correctText, answeredAt: command.now.toISOString(), scores: scored(command.forecasts, isCorrect) },
    },
  ];
}

/** The forecasts' outcomes and points: `share` (decisions.md) counts them all. */
function scored(forecasts: readonly ScoredForecast[], isCorrect: (f: ScoredForecast) => boolean) {
  const outcomes = forecasts.map((f) => ({ f, correct: isCorrect(f) }));
  const share = outcomes.length > 0 ? outcomes.filter((o) => o.correct).length / outcomes.length : 0;
  return outcomes.map(({ f, correct }) => ({ userId: f.userId, forecastId: f.forecastId, correct, points: correct ? pointsFor(share) : 0 }));
}

/**
 * Scores the forecasts the answer left out: one decided while its Castie was open and appended
 * while it was being answered. The answer's rule decides whether it is correct. Its share counts
 * the answer's forecasts and itself: as if it alone had come late, so its points do not depend on
 * which other late forecasts were found with it, or first. The points already given stand.
 * Nothing to do for forecasts scored late already (a forecast found by both of the policy's
 * checks is scored once), nor before an answer.
 */
function scoreLate(command: Extract<CastieCommand, { type: 'ScoreLateForecasts' }>, state: CastieState): CastieEvent[] {
  if (state.status !== 'answered') return [];
  const done = new Set(state.lateScored);
  const late: ScoredForecast[] = [];
  for (const f of command.forecasts) {
    if (done.has(f.userId)) continue;
    done.add(f.userId);
    late.push(f);
  }
  if (late.length === 0) return [];
  const { correctAnswerId, correctText } = state;
  const isCorrect = state.castie.allowWriteIn ? (f: ScoredForecast) => writeInMatches(f.text, correctText) : (f: ScoredForecast) => f.answerId === correctAnswerId;
  const scores = late.map((f) => {
    const correct = isCorrect(f);
    return { userId: f.userId, forecastId: f.forecastId, correct, points: correct ? pointsFor((state.correctCount + 1) / (state.scoredCount + 1)) : 0 };
  });
  return [{ type: 'ForecastsScored', data: { castieId: state.castie.castieId, groupSlug: state.castie.groupSlug, scores } }];
}

export const castieDecider: Decider<CastieCommand, CastieEvent, CastieState> = {
  initialState: () => ({ status: 'none' }),

  decide(command, state) {
    switch (command.type) {
      case 'CreateCastie':
        // A retried create (same id) finds its own Castie: nothing more to do.
        if (state.status !== 'none') return [];
        return create(command);
      case 'AnswerCastie':
        return answer(command, state);
      case 'ScoreLateForecasts':
        return scoreLate(command, state);
      case 'ReportCastie':
        if (state.status === 'none') throw new DomainError('object_not_found', 'the requested castie could not be found. make sure you are sending a valid uuid');
        if (state.castie.reporters.includes(command.reporterId)) return [];
        return [{ type: 'CastieReported', data: { castieId: state.castie.castieId, reporterId: command.reporterId } }];
      default: {
        const unknown: never = command;
        throw new Error(`unknown command ${JSON.stringify(unknown)}`);
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'CastieCreated': {
        const d = event.data;
        return { status: 'open', castie: { castieId: d.castieId, groupSlug: d.groupSlug, creatorId: d.creatorId, question: d.question, allowWriteIn: d.allowWriteIn, options: d.options, endsAt: d.endsAt, reporters: [] } };
      }
      case 'CastieAnswered': {
        if (state.status === 'none') return state;
        const { scores } = event.data;
        return {
          status: 'answered',
          castie: state.castie,
          correctAnswerId: event.data.correctAnswerId,
          correctText: event.data.correctText,
          scoredCount: scores.length,
          correctCount: scores.filter((s) => s.correct).length,
          lateScored: [],
        };
      }
      case 'ForecastsScored': {
        if (state.status !== 'answered') return state;
        return { ...state, lateScored: [...state.lateScored, ...event.data.scores.map((s) => s.userId)] };
      }
      case 'CastieReported':
        if (state.status === 'none') return state;
        return { ...state, castie: { ...state.castie, reporters: [...state.castie.reporters, event.data.reporterId] } };
      case 'ForecastPlaced':
      case 'CommentPosted':
      case 'CommentDeleted':
      case 'CommentReported':
        return state;
      default: {
        const unknown: never = event;
        throw new Error(`unhandled ${JSON.stringify(unknown)}`);
      }
    }
  },
};

export const castieStreamId = (castieId: string): string => `castie-${castieId}`;

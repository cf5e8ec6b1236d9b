import type { CastieEvent } from '@castie/contracts';
import { deciderSpec } from '@castie/platform/testing';
import { describe, expect, it } from 'vitest';
import { commentDecider } from '../comments/decider.ts';
import { forecastDecider } from '../forecasting/decider.ts';
import { castieDecider, type CastieCommand, type CastieState } from './decider.ts';

const ada = 'a'.repeat(32);
const bob = 'b'.repeat(32);
const cy = 'c'.repeat(32);
const id = 'f'.repeat(32);
const now = new Date('2026-03-01T12:00:00Z');
const later = new Date('2026-03-03T12:00:00Z');
const spec = deciderSpec(castieDecider);

const create = (extra: Partial<Extract<CastieCommand, { type: 'CreateCastie' }>> = {}): CastieCommand => ({
  type: 'CreateCastie',
  castieId: id,
  creatorId: ada,
  groupSlug: 'sports',
  group: { exists: true, mayCreate: true },
  pollType: 'Regular',
  closesOnDate: '2026-03-02',
  closesOnTime: '9:30',
  timeZone: 'Europe/Paris',
  question: ' Who wins? ',
  showUsername: true,
  allowWriteIn: false,
  options: [
    { answerId: 1, text: 'Home' },
    { answerId: 2, text: 'Away' },
  ],
  now,
  ...extra,
});
const created: CastieEvent = {
  type: 'CastieCreated',
  data: {
    castieId: id,
    groupSlug: 'sports',
    creatorId: ada,
    question: 'Who wins?',
    showUsername: true,
    allowWriteIn: false,
    options: [
      { answerId: 1, text: 'Home' },
      { answerId: 2, text: 'Away' },
    ],
    // 09:30 in Paris (UTC+1 in March) is 08:30 UTC.
    endsAt: '2026-03-02T08:30:00.000Z',
    endDate: '2026-03-02',
    endTime: '09:30',
    createdAt: now.toISOString(),
  },
};
const writeIn: CastieEvent = { type: 'CastieCreated', data: { ...(created.data as Extract<CastieEvent, { type: 'CastieCreated' }>['data']), allowWriteIn: true, options: [], endsAt: null, endDate: null, endTime: null } };
const forecasts = [
  { userId: bob, forecastId: 11, answerId: 1, text: 'Home' },
  { userId: cy, forecastId: 12, answerId: 2, text: 'Away' },
  { userId: ada, forecastId: 13, answerId: 2, text: 'Away' },
];

describe('castie decider: creating', () => {
  it('creates a Castie closing at the local end time of the service time zone', () => spec.given([]).when(create()).then([created]));
  it('creating again with the same id changes nothing', () => spec.given([created]).when(create()).thenNothing());
  it('creates open-ended write-in Casties without end or options', () =>
    expect(castieDecider.decide(create({ pollType: 'Open', allowWriteIn: true, closesOnDate: undefined, closesOnTime: undefined }), { status: 'none' })[0]).toMatchObject({
      data: { endsAt: null, endDate: null, endTime: null, options: [], allowWriteIn: true },
    }));
  it('refuses an unknown group', () => spec.given([]).when(create({ group: { exists: false, mayCreate: false } })).thenFails('castie_not_created', /does not exist/));
  it('refuses a group the creator may not create in', () => spec.given([]).when(create({ group: { exists: true, mayCreate: false } })).thenFails('castie_not_created', /may not create/));
  it('refuses an end in the past', () => spec.given([]).when(create({ closesOnDate: '2026-03-01', closesOnTime: '12:00', timeZone: 'UTC' })).thenFails('castie_not_created', /in the past/));
  it('closes at the local time of the day clocks move, and refuses a time they skip', () => {
    // Paris moves from 02:00 to 03:00 on 2026-03-29: 03:30 is summer time (UTC+2), 02:30 never happens.
    expect(castieDecider.decide(create({ closesOnDate: '2026-03-29', closesOnTime: '03:30' }), { status: 'none' })[0]).toMatchObject({ data: { endsAt: '2026-03-29T01:30:00.000Z', endDate: '2026-03-29', endTime: '03:30' } });
    spec.given([]).when(create({ closesOnDate: '2026-03-29', closesOnTime: '02:30' })).thenFails('castie_not_created', /Europe\/Paris \(a time its clocks skip never happens\)/);
  });
  it('refuses a Regular poll without an end', () => spec.given([]).when(create({ closesOnTime: undefined })).thenFails('castie_not_created', /needs closes_on_date/));
  it('refuses fewer than two options', () => spec.given([]).when(create({ options: [{ answerId: 1, text: 'Home' }] })).thenFails('castie_not_created', /at least 2/));
  it('refuses duplicate options', () => spec.given([]).when(create({ options: [{ answerId: 1, text: 'Home' }, { answerId: 2, text: 'home' }] })).thenFails('castie_not_created', /different/));
});

describe('castie decider: answering', () => {
  const answer = (extra: Partial<Extract<CastieCommand, { type: 'AnswerCastie' }>> = {}): CastieCommand => ({ type: 'AnswerCastie', userId: ada, answerId: '1', keyword: undefined, forecasts, now: later, ...extra });
  it('scores every forecast: right against the crowd pays', () =>
    spec.given([created]).when(answer()).then([
      {
        type: 'CastieAnswered',
        data: {
          castieId: id,
          groupSlug: 'sports',
          correctAnswerId: 1,
          correctText: 'Home',
          answeredAt: later.toISOString(),
          scores: [
            { userId: bob, forecastId: 11, correct: true, points: 70 },
            { userId: cy, forecastId: 12, correct: false, points: 0 },
            { userId: ada, forecastId: 13, correct: false, points: 0 },
          ],
        },
      },
    ]));
  it('refuses before the end', () => spec.given([created]).when(answer({ now })).thenFails('castie_not_answerable', /not ended yet/));
  it('refuses anyone but the creator', () => spec.given([created]).when(answer({ userId: bob })).thenFails('castie_not_answerable', /only the creator/));
  it('refuses a second answer', () => {
    const [answered] = castieDecider.decide(answer(), spec.given([created]).state);
    spec.given([created, answered!]).when(answer()).thenFails('castie_not_answerable', /already been answered/);
  });
  it('refuses an answer id that is not an option', () => spec.given([created]).when(answer({ answerId: 9 })).thenFails('castie_not_answerable', /valid answer option/));
  it('needs an answer id', () => spec.given([created]).when(answer({ answerId: undefined })).thenFails('missing_request_data'));
  it('answers an open-ended write-in Castie at any time by keyword, contained, any case, trimmed', () => {
    const [event] = castieDecider.decide(answer({ now, answerId: undefined, keyword: ' paris ', forecasts: [{ userId: bob, forecastId: 1, answerId: null, text: 'PSG Paris' }, { userId: cy, forecastId: 2, answerId: null, text: 'Lyon' }] }), spec.given([writeIn]).state);
    expect(event).toMatchObject({ data: { correctAnswerId: null, correctText: 'paris', scores: [{ correct: true, points: 55 }, { correct: false, points: 0 }] } });
  });
  it('an unknown Castie is not found', () => spec.given([]).when(answer()).thenFails('object_not_found'));
});

describe('castie decider: forecasts scored after the answer', () => {
  const dan = 'd'.repeat(32);
  const eve = 'e'.repeat(32);
  const answered = castieDecider.decide({ type: 'AnswerCastie', userId: ada, answerId: '1', keyword: undefined, forecasts, now: later }, spec.given([created]).state)[0]!;
  const late = (...users: [string, number][]): CastieCommand => ({ type: 'ScoreLateForecasts', forecasts: users.map(([userId, answerId], i) => ({ userId, forecastId: 20 + i, answerId, text: answerId === 1 ? 'Home' : 'Away' })) });
  it("scores those the answer left out, each in a share with the answer's forecasts", () =>
    // 1 of the answer's 3 was right; with dan's, 2 of 4: 10 + round(90 × 0.5) = 55 (the answer's 70 stands).
    spec.given([created, answered]).when(late([dan, 1], [eve, 2])).then([
      {
        type: 'ForecastsScored',
        data: {
          castieId: id,
          groupSlug: 'sports',
          scores: [
            { userId: dan, forecastId: 20, correct: true, points: 55 },
            { userId: eve, forecastId: 21, correct: false, points: 0 },
          ],
        },
      },
    ]));
  it('gives a late forecast the same points whether found alone, first, or with others', () => {
    const together = castieDecider.decide(late([dan, 1], [eve, 1]), spec.given([created, answered]).state)[0]!;
    const [first] = castieDecider.decide(late([dan, 1]), spec.given([created, answered]).state);
    const second = castieDecider.decide(late([eve, 1]), spec.given([created, answered, first!]).state)[0]!;
    const points = (e: CastieEvent) => (e.type === 'ForecastsScored' ? e.data.scores.map((s) => s.points) : []);
    expect(points(together)).toEqual([55, 55]);
    expect([...points(first!), ...points(second)]).toEqual([55, 55]);
  });
  it('scores each forecaster once: those scored late before, and twice in one command', () => {
    const [first] = castieDecider.decide(late([dan, 1]), spec.given([created, answered]).state);
    spec.given([created, answered, first!]).when(late([dan, 1])).thenNothing();
    expect(castieDecider.decide(late([eve, 2], [eve, 2]), spec.given([created, answered, first!]).state)).toMatchObject([{ data: { scores: [{ userId: eve }] } }]);
  });
  it('scores nothing before an answer', () => spec.given([created]).when(late([dan, 1])).thenNothing());
  it('a write-in forecast is correct by the answer keyword', () => {
    const keyword = castieDecider.decide({ type: 'AnswerCastie', userId: ada, answerId: undefined, keyword: 'paris', forecasts: [{ userId: bob, forecastId: 1, answerId: null, text: 'Lyon' }], now }, spec.given([writeIn]).state)[0]!;
    const scored = castieDecider.decide({ type: 'ScoreLateForecasts', forecasts: [{ userId: dan, forecastId: 1, answerId: null, text: 'PSG PARIS ' }, { userId: eve, forecastId: 2, answerId: null, text: 'Lyon' }] }, spec.given([writeIn, keyword]).state);
    // 1 right of bob's and its own: 10 + round(90 × 0.5) = 55.
    expect(scored).toMatchObject([{ data: { scores: [{ correct: true, points: 55 }, { correct: false, points: 0 }] } }]);
  });
});

describe('forecast decider (one stream per user and Castie)', () => {
  const castie = spec.given([created]).state as CastieState;
  const forecasting = deciderSpec(forecastDecider);
  const place = (extra: Partial<Parameters<typeof forecastDecider.decide>[0]> = {}) => ({ type: 'PlaceForecast' as const, userId: bob, castie, visible: true, forecastId: 7, answerId: 2 as string | number | undefined, forecastText: undefined, now, ...extra });
  const placed: CastieEvent = { type: 'ForecastPlaced', data: { castieId: id, groupSlug: 'sports', userId: bob, forecastId: 7, answerId: 2, text: 'Away', placedAt: now.toISOString() } };
  it('places a forecast on an option', () => forecasting.given([]).when(place()).then([placed]));
  it('refuses a second forecast', () => forecasting.given([placed]).when(place()).thenFails('cannot_forecast', 'the User has already forecasted this Castie'));
  it('refuses once the end passed', () => forecasting.given([]).when(place({ now: later })).thenFails('cannot_forecast', 'this castie is not accepting forecasts- end date/time has passed'));
  it('needs answer_id', () => forecasting.given([]).when(place({ answerId: undefined })).thenFails('cannot_forecast', 'answer_id was not sent in request'));
  it('refuses an answer_id of another Castie', () => forecasting.given([]).when(place({ answerId: '99' })).thenFails('cannot_forecast', 'the answer_id provided does not correspond to a valid answer option for this castie'));
  it('refuses a Castie the user may not see, or none', () => {
    forecasting.given([]).when(place({ visible: false })).thenFails('object_not_found');
    forecasting.given([]).when(place({ castie: { status: 'none' } })).thenFails('object_not_found');
  });
  it('refuses forecasts on an answered open-ended Castie', () => {
    const state = spec.given([writeIn, { type: 'CastieAnswered', data: { castieId: id, groupSlug: 'sports', correctAnswerId: null, correctText: 'x', answeredAt: now.toISOString(), scores: [] } }]).state;
    forecasting.given([]).when(place({ castie: state, answerId: undefined, forecastText: 'x' })).thenFails('cannot_forecast', /not accepting/);
  });
});

describe('comment decider', () => {
  const comments = deciderSpec(commentDecider);
  const posted: CastieEvent = { type: 'CommentPosted', data: { commentId: id, castieId: id, userId: ada, text: 'hi', postedAt: now.toISOString() } };
  it('posts a trimmed comment', () => comments.given([]).when({ type: 'PostComment', commentId: id, castieId: id, userId: ada, text: ' hi ', now }).then([posted]));
  it('refuses empty and over-long comments', () => {
    comments.given([]).when({ type: 'PostComment', commentId: id, castieId: id, userId: ada, text: '  ', now }).thenFails('comment_not_created');
    comments.given([]).when({ type: 'PostComment', commentId: id, castieId: id, userId: ada, text: 'x'.repeat(501), now }).thenFails('comment_not_created', /500/);
  });
  it('lets only the author delete', () => {
    comments.given([posted]).when({ type: 'DeleteComment', userId: bob }).thenFails('not_allowed');
    comments.given([posted]).when({ type: 'DeleteComment', userId: ada }).then([{ type: 'CommentDeleted', data: { commentId: id, castieId: id, userId: ada } }]);
  });
  it('counts each reporter once', () => {
    const reported: CastieEvent = { type: 'CommentReported', data: { commentId: id, castieId: id, reporterId: bob } };
    comments.given([posted]).when({ type: 'ReportComment', reporterId: bob }).then([reported]);
    comments.given([posted, reported]).when({ type: 'ReportComment', reporterId: bob }).thenNothing();
  });
});

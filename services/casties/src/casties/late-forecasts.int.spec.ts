import { castieEvents } from '@castie/contracts';
import { CommandHandler, type Subscription } from '@castie/platform';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { forecastDecider, forecastStreamId } from '../forecasting/decider.ts';
import { FORECASTS, forecastDocId } from '../forecasting/read-model.ts';
import { CastiesFixture, type Person } from '../test-support/fixture.ts';
import { castieStreamId } from './decider.ts';
import { startLateForecastsPolicy } from './late-forecasts-policy.ts';
import { castieHandler } from './visibility.ts';

// An open-ended Castie takes forecasts until its creator answers it. A forecast is decided on the
// Castie's stream and lands on its own; the answer scores the forecasts it finds, then lands on
// the Castie's. A forecast accepted at the moment of the answer must earn its points all the same.

let fx: CastiesFixture;
let host: Person;
let policy: Subscription;
const players: Person[] = [];
const eventually = (check: () => Promise<void>) => vi.waitFor(check, { timeout: 5000, interval: 10 });

const openEnded = (question: string) => ({ group_slug: 'chess', poll_type: 'Open', question, answer_type: 'Set answer options', answer_option: ['Yes', 'No'], display_created_by: 'true' });

beforeAll(async () => {
  fx = await CastiesFixture.start();
  host = await fx.person('host');
  await fx.group('chess');
  await fx.follow(host, 'chess');
  for (let i = 0; i < 22; i++) {
    const p = await fx.person(`p${i}`);
    await fx.follow(p, 'chess');
    players.push(p);
  }
  policy = await startLateForecastsPolicy({ log: fx.log, store: await fx.store('casties'), documents: fx.documents, clock: fx.clock, readModels: fx.runner });
});
afterAll(async () => {
  await policy.stop();
  await fx.close();
});

/** The option ids of a Castie, as its creator's answer page lists them. */
async function options(uuid: string): Promise<{ yes: number; no: number }> {
  const [yes, no] = Object.keys((await fx.get(`/api/casties/${uuid}/answer/`, host)).body.answer_options).map(Number);
  return { yes: yes!, no: no! };
}

const xpOn = async (board: string, p: Person): Promise<number | undefined> =>
  ((await fx.get(`/api/leaderboard/${board}/`, host)).body.leaderboard_profiles as { handle: string; xp: number }[]).find((e) => e.handle === p.handle)?.xp;

/** The position of the last record of the casties topic (the embedded log: one partition). */
const lastRecord = async () => ({ topic: 'casties', partition: 0, offset: (await fx.log.endOffsets('casties')).get(0)! - 1 });

const isCorrect = async (uuid: string, p: Person): Promise<boolean | undefined> => (await fx.get(`/api/casties/${uuid}/`, p)).body.castie.userForecast?.is_correct;

describe('a forecast accepted while its Castie is answered', () => {
  it('lands after the answer: it is scored with the share of every forecast (the answer found 1 of 1 right; 2 of 2 now: 10 points)', async () => {
    const [early, late] = [players[0]!, players[1]!];
    const uuid = await fx.castie(host, openEnded('Does the early player win?'));
    const { yes } = await options(uuid);
    expect((await fx.post(`/api/casties/${uuid}/forecast/`, early, { answer_id: yes })).status).toBe(200);
    // The late forecast is decided now, on the Castie still open, as the forecast route decides it...
    const open = await castieHandler(await fx.store('casties')).load(castieStreamId(uuid));
    const before = (await xpOn('chess', late)) ?? 0;
    expect((await fx.post(`/api/casties/${uuid}/answer/`, host, { answer_id: yes })).status).toBe(200);
    // ...and lands once the answer scored the forecasts it found, and the policy looked for any it missed (none yet).
    expect(await policy.waitFor([await lastRecord()], 5000)).toBe(true);
    const forecasts = new CommandHandler(await fx.store('casties'), castieEvents, forecastDecider);
    await forecasts.handle(forecastStreamId(uuid, late.userId), { type: 'PlaceForecast', userId: late.userId, castie: open.state, visible: true, forecastId: 7, answerId: yes, forecastText: undefined, now: fx.clock.now() }, { actor: late.userId, now: fx.clock.now() });
    await eventually(async () => {
      expect(await isCorrect(uuid, late)).toBe(true);
      expect(await xpOn('chess', late)).toBe(before + 10);
    });
    // The answer's points stand (100: the only forecast it found, and right).
    expect(await isCorrect(uuid, early)).toBe(true);
  });

  it('lands before the answer but after it looked for forecasts: it is scored once the answer landed', async () => {
    const [scoredPlayer, missed] = [players[2]!, players[3]!];
    const uuid = await fx.castie(host, openEnded('Does the missed player win?'));
    const { yes, no } = await options(uuid);
    expect((await fx.post(`/api/casties/${uuid}/forecast/`, scoredPlayer, { answer_id: no })).status).toBe(200);
    const missedForecast = await fx.post(`/api/casties/${uuid}/forecast/`, missed, { answer_id: yes });
    expect(missedForecast.status).toBe(200);
    // The policy saw this forecast while its Castie was open: nothing to score then.
    expect(await policy.waitFor([await lastRecord()], 5000)).toBe(true);
    const before = (await xpOn('chess', missed)) ?? 0;
    // The answer as the route gives it when its look at the forecasts came before this one landed.
    await castieHandler(await fx.store('casties')).handle(
      castieStreamId(uuid),
      { type: 'AnswerCastie', userId: host.userId, answerId: yes, keyword: undefined, forecasts: [{ userId: scoredPlayer.userId, forecastId: 1, answerId: no, text: 'No' }], now: fx.clock.now() },
      { actor: host.userId, now: fx.clock.now() },
    );
    // 1 right of 2: 10 + round(90 × 0.5) = 55.
    await eventually(async () => {
      expect(await isCorrect(uuid, missed)).toBe(true);
      expect(await xpOn('chess', missed)).toBe(before + 55);
    });
    expect(await isCorrect(uuid, scoredPlayer)).toBe(false);
  });

  it('was scored by the answer, but the read models do not show it yet: it is not scored again', async () => {
    const player = players[4]!;
    const uuid = await fx.castie(host, openEnded('Is the answer counted once?'));
    const { yes } = await options(uuid);
    // The policy stops; the read models stand still; the forecast lands, and the answer scores it.
    await policy.stop();
    await fx.runner.pause();
    const casties = await fx.store('casties');
    const open = await castieHandler(casties).load(castieStreamId(uuid));
    await new CommandHandler(casties, castieEvents, forecastDecider).handle(forecastStreamId(uuid, player.userId), { type: 'PlaceForecast', userId: player.userId, castie: open.state, visible: true, forecastId: 9, answerId: yes, forecastText: undefined, now: fx.clock.now() }, { actor: player.userId, now: fx.clock.now() });
    await castieHandler(casties).handle(castieStreamId(uuid), { type: 'AnswerCastie', userId: host.userId, answerId: yes, keyword: undefined, forecasts: [{ userId: player.userId, forecastId: 9, answerId: yes, text: 'Yes' }], now: fx.clock.now() }, { actor: host.userId, now: fx.clock.now() });
    const end = await lastRecord();
    // The policy comes back and finds the forecast on an answered Castie, without a score in the
    // read models; then the answer, whose check waits for the read models: they go on then.
    let reachedAnswer!: () => void;
    const answerChecked = new Promise<void>((resolve) => (reachedAnswer = resolve));
    const readModels = { catchUp: (...args: Parameters<typeof fx.runner.catchUp>) => (reachedAnswer(), fx.runner.catchUp(...args)) };
    policy = await startLateForecastsPolicy({ log: fx.log, store: casties, documents: fx.documents, clock: fx.clock, readModels });
    await answerChecked;
    fx.runner.resume();
    expect(await policy.waitFor([end], 10_000)).toBe(true);
    expect((await casties.readStream(castieStreamId(uuid))).events.map((e) => e.type)).toEqual(['CastieCreated', 'CastieAnswered']);
    // The only forecast, and right: 10 points, once.
    expect(await isCorrect(uuid, player)).toBe(true);
    expect(Object.values((await fx.get(`/api/profile/${player.handle}/stats/`, player)).body.myForecasts)).toEqual([expect.objectContaining({ uuid, points_earned: 10 })]);
  });

  /**
   * The answer landed and its check found nothing; the policy stops (a restart, a crash); a
   * forecast decided on the Castie still open lands now, on an answered Castie. When the policy
   * comes back, only the forecast's own check can score it: the answer's record lies behind it.
   */
  async function landsWhileThePolicyIsAway(player: Person, question: string, readModelsHoldIt: boolean): Promise<string> {
    const uuid = await fx.castie(host, openEnded(question));
    const { yes } = await options(uuid);
    const casties = await fx.store('casties');
    const open = await castieHandler(casties).load(castieStreamId(uuid));
    expect((await fx.post(`/api/casties/${uuid}/answer/`, host, { answer_id: yes })).status).toBe(200);
    expect(await policy.waitFor([await lastRecord()], 5000)).toBe(true);
    await policy.stop();
    let policyBack = false;
    if (!readModelsHoldIt) await fx.runner.pause();
    // A failure here must not leave the other tests without the policy or with read models standing still.
    try {
      await new CommandHandler(casties, castieEvents, forecastDecider).handle(forecastStreamId(uuid, player.userId), { type: 'PlaceForecast', userId: player.userId, castie: open.state, visible: true, forecastId: 11, answerId: yes, forecastText: undefined, now: fx.clock.now() }, { actor: player.userId, now: fx.clock.now() });
      const end = await lastRecord();
      const held = () => fx.documents.collection(FORECASTS).findOne({ _id: forecastDocId(uuid, player.userId) });
      if (readModelsHoldIt) {
        expect(await fx.runner.catchUp(['casties'], 5000)).toBe(true);
        expect(await held()).toMatchObject({ correct: null });
      } else expect(await held()).toBeNull();
      policy = await startLateForecastsPolicy({ log: fx.log, store: casties, documents: fx.documents, clock: fx.clock, readModels: fx.runner });
      policyBack = true;
      expect(await policy.waitFor([end], 10_000)).toBe(true);
    } finally {
      if (!readModelsHoldIt) fx.runner.resume();
      if (!policyBack) policy = await startLateForecastsPolicy({ log: fx.log, store: casties, documents: fx.documents, clock: fx.clock, readModels: fx.runner });
    }
    return uuid;
  }

  it('lands after the answer was checked, while the policy was away: it is scored when the policy comes back (the read models hold it, unscored)', async () => {
    const player = players[5]!;
    const uuid = await landsWhileThePolicyIsAway(player, 'Is the returning policy thorough?', true);
    // The only forecast, and right: 10 points.
    await eventually(async () => expect(await isCorrect(uuid, player)).toBe(true));
    expect((await castieHandler(await fx.store('casties')).load(castieStreamId(uuid))).state).toMatchObject({ lateScored: [player.userId] });
  });

  it('lands after the answer was checked, while the policy was away: it is scored when the policy comes back (the read models do not hold it yet)', async () => {
    const player = players[6]!;
    const uuid = await landsWhileThePolicyIsAway(player, 'Is the policy ahead of the read models?', false);
    await eventually(async () => expect(await isCorrect(uuid, player)).toBe(true));
    expect((await castieHandler(await fx.store('casties')).load(castieStreamId(uuid))).state).toMatchObject({ lateScored: [player.userId] });
  });

  it('races the answer through the API: each is refused or scored, never accepted and left unscored', async () => {
    const racing = players.slice(7);
    const accepted: { uuid: string; player: Person }[] = [];
    for (const player of racing) {
      const uuid = await fx.castie(host, openEnded(`Will ${player.handle} win?`));
      const { yes } = await options(uuid);
      const [answer, forecast] = await Promise.all([fx.post(`/api/casties/${uuid}/answer/`, host, { answer_id: yes }), fx.post(`/api/casties/${uuid}/forecast/`, player, { answer_id: yes })]);
      expect(answer.status).toBe(200);
      if (forecast.status === 200) accepted.push({ uuid, player });
      else expect(forecast.body.error).toBe('cannot_forecast');
    }
    await eventually(async () => {
      const unscored = [];
      for (const { uuid, player } of accepted) if (!(await isCorrect(uuid, player))) unscored.push(player.handle);
      expect(unscored).toEqual([]);
    });
  });
});

import { castieStreamId, commentStreamId, forecastStreamId, randomId48, type CastieState, type ScoredForecast } from '@castie/casties';
import { apiDate, apiTimeShort } from '@castie/contracts';
import { newId } from '@castie/platform';
import { DAY, HOUR, MINUTE, type SeedContext } from './context.ts';
import type { SeedGroup } from './groups.ts';
import { inFlight } from './in-flight.ts';
import type { SeedUser } from './people.ts';
import { WeightedIndex, type Random } from './random.ts';
import { COMMENTS, LIKELIHOOD, TIMEFRAMES } from './vocabulary.ts';

type OpenCastie = Extract<CastieState, { status: 'open' }>;

export interface SeedCastie {
  castieId: string;
  group: number;
  creator: number;
  createdAt: number;
  /** Closing instant as the decider computed it (ms); null when open-ended. */
  endsAt: number | null;
  allowWriteIn: boolean;
  /** What people answer: the option texts, or the write-in answers forecasters choose from. */
  choices: string[];
  /** How the crowd leans between the choices. */
  lean: number[];
  /** The Castie as its stream says after creation: what PlaceForecast is decided against. */
  state: OpenCastie;
  /** When the creator answers it (null: never); set before forecasts so none comes after it. */
  answerAt: number | null;
  /** End of the forecasting window: the end, the answer, or now, whichever comes first. */
  closeAt: number;
  /** What the answer route gathers from the read model, kept here instead. */
  forecasts: ScoredForecast[];
  /** Who forecast, with when: commenters are often forecasters. */
  forecasters: { user: number; at: number }[];
  /** Index into `choices` of each forecast (parallel to `forecasts`). */
  picked: number[];
}

interface CastiePlan {
  group: number;
  creator: number;
  createdAt: number;
  question: string;
  allowWriteIn: boolean;
  choices: string[];
  closes: { date: string; time: string } | null;
  showUsername: boolean;
  lean: number[];
}

/** Rounds up to the next whole minute: the API takes closing times as HH:MM. */
const nextMinute = (ms: number): number => Math.ceil((ms + 1) / MINUTE) * MINUTE;

function question(random: Random, group: SeedGroup, options: number): { text: string; choices: string[] } {
  const { subjects, happenings } = group.topic;
  const subject = random.pick(subjects);
  const happening = random.pick(happenings);
  const when = random.pick(TIMEFRAMES);
  const tail = when ? ` ${when}` : '';
  if (options === 0) return { text: `Who will ${happening} next?`, choices: [...subjects] };
  if (options === 2) return { text: `Will ${subject} ${happening}${tail}?`, choices: ['Yes', 'No'] };
  if (options === 3) return { text: `Will ${subject} ${happening}${tail}?`, choices: ['Yes', 'No', 'Too close to call'] };
  if (random.chance(0.5) && subjects.length >= options) return { text: `Who will ${happening} first?`, choices: random.shuffle([...subjects]).slice(0, options) };
  return { text: `How likely is it that ${subject} will ${happening}${tail}?`, choices: LIKELIHOOD.slice(0, options) };
}

/**
 * Creates `count` Casties as the create route does (CreateCastie on `castie-<uuid>`), each by a
 * follower of its group (the only people who may create there), at a moment after they followed.
 * Groups get Casties by their followers; 70% have 2 to 5 answer options, 30% take write-ins; 40%
 * are open-ended, the rest close between two hours and six weeks after creation (most of them
 * already in the past). Then it decides which get answered, before any forecast is placed.
 */
export async function seedCasties(ctx: SeedContext, users: readonly SeedUser[], groups: readonly SeedGroup[], count: number): Promise<SeedCastie[]> {
  const random = ctx.random('casties');
  const byGroup = new WeightedIndex(groups.map((g) => g.followers.length ** 0.9));
  if (count > 0 && byGroup.total <= 0) throw new Error('seed: no group has followers, so nobody may create a Castie');
  const creatorsOf = new Map<number, WeightedIndex>();
  const creators = (g: number) => creatorsOf.get(g) ?? creatorsOf.set(g, new WeightedIndex(groups[g]!.followers.map((f) => users[f.user]!.activity))).get(g)!;

  const plans: CastiePlan[] = [];
  for (let i = 0; i < count; i++) {
    const g = byGroup.draw(random);
    const group = groups[g]!;
    // A creator who followed early enough to create before now.
    let follower = group.followers[creators(g).draw(random)]!;
    for (let tries = 0; follower.since > ctx.now - HOUR && tries < 20; tries++) follower = group.followers[creators(g).draw(random)]!;
    if (follower.since > ctx.now - HOUR) follower = group.followers[0]!;
    const createdAt = Math.min(ctx.now - MINUTE, random.between(follower.since + 10 * MINUTE, ctx.now - 30 * MINUTE));
    const allowWriteIn = random.chance(0.3);
    const { text, choices } = question(random, group, allowWriteIn ? 0 : random.int(2, 5));
    let closes: CastiePlan['closes'] = null;
    if (!random.chance(0.4)) {
      // Log-uniform between 2 hours and 6 weeks.
      const duration = Math.exp(random.between(Math.log(2 * HOUR), Math.log(42 * DAY)));
      const endsAt = new Date(nextMinute(createdAt + duration));
      closes = { date: apiDate(endsAt, ctx.timeZone), time: apiTimeShort(endsAt, ctx.timeZone) };
    }
    plans.push({ group: g, creator: follower.user, createdAt, question: text, allowWriteIn, choices, closes, showUsername: random.chance(0.85), lean: choices.map(() => random.logNormal(0.9)) });
  }
  plans.sort((a, b) => a.createdAt - b.createdAt);

  const casties: SeedCastie[] = new Array(plans.length);
  ctx.progress.begin('casties', plans.length);
  await inFlight(
    plans.map((plan, i) => ({ plan, i })),
    ctx.concurrency,
    async ({ plan, i }) => {
      const creator = users[plan.creator]!;
      const group = groups[plan.group]!;
      const castieId = newId();
      // Distinct random answer ids, as the route draws them.
      const ids = new Set<number>();
      while (ids.size < (plan.allowWriteIn ? 0 : plan.choices.length)) ids.add(randomId48());
      const idList = [...ids];
      const done = await ctx.exec(
        ctx.write.casties,
        castieStreamId(castieId),
        {
          type: 'CreateCastie',
          castieId,
          creatorId: creator.userId,
          groupSlug: group.slug,
          group: { exists: true, mayCreate: true },
          pollType: plan.closes ? 'Regular' : 'Open',
          closesOnDate: plan.closes?.date,
          closesOnTime: plan.closes?.time,
          timeZone: ctx.timeZone,
          question: plan.question,
          showUsername: plan.showUsername,
          allowWriteIn: plan.allowWriteIn,
          options: plan.allowWriteIn ? [] : plan.choices.map((text, k) => ({ answerId: idList[k]!, text })),
          now: new Date(plan.createdAt),
        },
        creator.userId,
        plan.createdAt,
      );
      if (done.state.status !== 'open') throw new Error(`seed: Castie ${castieId} was not created`);
      const endsAt = done.state.castie.endsAt === null ? null : Date.parse(done.state.castie.endsAt);
      casties[i] = {
        castieId,
        group: plan.group,
        creator: plan.creator,
        createdAt: plan.createdAt,
        endsAt,
        allowWriteIn: plan.allowWriteIn,
        choices: plan.choices,
        lean: plan.lean,
        state: done.state,
        answerAt: null,
        closeAt: Math.min(endsAt ?? Infinity, ctx.now),
        forecasts: [],
        forecasters: [],
        picked: [],
      };
    },
    (n) => ctx.progress.advance(n),
  );
  ctx.progress.end();

  // Answers are decided now, so that every forecast falls before its Castie's answer.
  const answering = ctx.random('answer-plan');
  for (const c of casties) {
    if (c.endsAt !== null) {
      if (c.endsAt <= ctx.now - MINUTE && answering.chance(0.8)) c.answerAt = Math.min(ctx.now - 1000, c.endsAt + 1000 + answering.exponential(20 * HOUR));
    } else if (c.createdAt < ctx.now - 3 * DAY && answering.chance(0.2)) {
      // Open-ended Casties can be answered any time; answering ends them.
      c.answerAt = c.createdAt + answering.between(DAY, Math.min(60 * DAY, ctx.now - c.createdAt - HOUR));
    }
    c.closeAt = Math.min(c.endsAt ?? Infinity, c.answerAt ?? Infinity, ctx.now);
  }
  return casties;
}

/** Who may forecast a Castie, as a prefix of a list sorted by the moment they may start. */
interface Eligible {
  /** How many may forecast it at all (they could before it closed). */
  cap: number;
  /** The i-th eligible person and from when. */
  at(i: number): { user: number; from: number };
}

/** Largest n with key(i) < limit for all i < n, over a sorted array. */
function prefixBelow<T>(items: readonly T[], key: (item: T) => number, limit: number): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (key(items[mid]!) < limit) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Splits `total` into integers proportional to `weights`, none above its cap (water-filling: a
 * share that would pass its cap is cut to it and the rest is shared again). Less than `total`
 * only when the caps add up to less.
 */
export function allocate(total: number, weights: readonly number[], caps: readonly number[]): number[] {
  const counts = caps.map(() => 0);
  const capSum = caps.reduce((a, b) => a + b, 0);
  if (total >= capSum) return [...caps];
  let active = weights.flatMap((w, i) => (caps[i]! > 0 && w > 0 ? [i] : []));
  let remaining = total;
  for (;;) {
    const sum = active.reduce((a, i) => a + weights[i]!, 0);
    const capped = active.filter((i) => (remaining * weights[i]!) / sum >= caps[i]!);
    if (capped.length === 0) {
      const shares = active.map((i) => ({ i, share: (remaining * weights[i]!) / sum }));
      let left = remaining;
      for (const s of shares) {
        counts[s.i] = Math.floor(s.share);
        left -= counts[s.i]!;
      }
      shares.sort((a, b) => (b.share % 1) - (a.share % 1));
      for (let k = 0; left > 0 && k < shares.length; k++, left--) counts[shares[k]!.i]! += 1;
      return counts;
    }
    const cut = new Set(capped);
    for (const i of capped) {
      counts[i] = caps[i]!;
      remaining -= caps[i]!;
    }
    active = active.filter((i) => !cut.has(i));
  }
}

interface ForecastPlan {
  castie: number;
  user: number;
  at: number;
  choice: number;
  /** What a write-in forecaster types. */
  text: string | undefined;
}

/** What a write-in forecaster types for a choice: its keyword, said in one of a few ways. */
function writeIn(random: Random, answer: string): string {
  switch (random.int(0, 5)) {
    case 0:
      return answer.toLowerCase();
    case 1:
      return `${answer} for sure`;
    case 2:
      return `I think ${answer}`;
    default:
      return answer;
  }
}

/**
 * Places `total` forecasts as the forecast route does (PlaceForecast on
 * `forecast-<uuid>-<userId>`, decided against the Castie's state kept in memory), at most one per
 * person and Castie, by people who can see the group (granted followers on approval groups;
 * mostly followers, also others, on public ones), between creation and the close. Popularity is
 * heavy-tailed: a few Casties get hundreds, most a few. Returns how many it placed: fewer than
 * asked only when the Casties cannot take that many (every eligible person forecast them all).
 */
export async function seedForecasts(ctx: SeedContext, users: readonly SeedUser[], groups: readonly SeedGroup[], casties: SeedCastie[], total: number): Promise<number> {
  const random = ctx.random('forecasts');
  const margin = 2 * MINUTE;
  const available = (user: number) => users[user]!.joinedAt + MINUTE;
  const everyone = new WeightedIndex(users.map((u) => u.activity));
  const followersIndex = groups.map((g) => new WeightedIndex(g.followers.map((f) => users[f.user]!.activity)));
  const followerSets = groups.map((g) => new Set(g.followers.map((f) => f.user)));

  const eligible: Eligible[] = casties.map((c) => {
    const group = groups[c.group]!;
    if (group.state.requiresApproval) {
      const cap = prefixBelow(group.followers, (f) => f.since, c.closeAt - margin);
      return { cap, at: (i) => ({ user: group.followers[i]!.user, from: group.followers[i]!.since }) };
    }
    const cap = prefixBelow(users, (u) => u.joinedAt + MINUTE, c.closeAt - margin);
    return { cap, at: (i) => ({ user: i, from: available(i) }) };
  });
  const meanFollowers = groups.reduce((a, g) => a + g.followers.length, 0) / Math.max(1, groups.length) || 1;
  const weights = casties.map((c) => {
    const window = Math.max(0, c.closeAt - c.createdAt);
    return random.logNormal(1.6) * Math.sqrt((groups[c.group]!.followers.length + 1) / meanFollowers) * Math.sqrt(Math.min(1, window / (3 * DAY)));
  });
  const counts = allocate(total, weights, eligible.map((e) => e.cap));

  const plans: ForecastPlan[] = [];
  casties.forEach((c, ci) => {
    const want = counts[ci]!;
    if (want === 0) return;
    const { cap, at } = eligible[ci]!;
    const group = groups[c.group]!;
    const approval = group.state.requiresApproval;
    const chosen = new Map<number, number>();
    const take = (user: number, from: number) => {
      if (!chosen.has(user)) chosen.set(user, from);
    };
    if (want <= cap * 0.4) {
      for (let attempts = 0; chosen.size < want && attempts < 30 * want + 100; attempts++) {
        if (approval) {
          const i = followersIndex[c.group]!.draw(random);
          if (i < cap) take(group.followers[i]!.user, group.followers[i]!.since);
        } else {
          // Public group: mostly its followers, also anyone who came across it.
          const user = random.chance(0.7) && group.followers.length > 0 ? group.followers[followersIndex[c.group]!.draw(random)]!.user : everyone.draw(random);
          if (user < cap) take(user, available(user));
        }
      }
    }
    if (chosen.size < want) {
      // Dense (or unlucky): everyone eligible, weighted, without replacement.
      const candidates = Array.from({ length: cap }, (_, i) => at(i)).filter((e) => !chosen.has(e.user));
      const w = candidates.map((e) => users[e.user]!.activity * (!approval && followerSets[c.group]!.has(e.user) ? 4 : 1));
      for (const i of random.weightedSample(w, want - chosen.size)) take(candidates[i]!.user, candidates[i]!.from);
    }
    const leanIndex = new WeightedIndex(c.lean);
    for (const [user, from] of chosen) {
      const lo = Math.max(c.createdAt, from) + 1000;
      const hi = c.closeAt - 1000;
      // Most forecast soon after they see it.
      const choice = leanIndex.draw(random);
      plans.push({ castie: ci, user, at: lo + (hi - lo) * random.next() ** 1.8, choice, text: c.allowWriteIn ? writeIn(random, c.choices[choice]!) : undefined });
    }
  });
  plans.sort((a, b) => a.at - b.at);

  ctx.progress.begin('forecasts', plans.length);
  await inFlight(
    plans,
    ctx.concurrency,
    async (p) => {
      const c = casties[p.castie]!;
      const user = users[p.user]!;
      const done = await ctx.exec(
        ctx.write.forecasts,
        forecastStreamId(c.castieId, user.userId),
        {
          type: 'PlaceForecast',
          userId: user.userId,
          castie: c.state,
          visible: true,
          forecastId: randomId48(),
          answerId: c.allowWriteIn ? undefined : c.state.castie.options[p.choice]!.answerId,
          forecastText: p.text,
          now: new Date(p.at),
        },
        user.userId,
        p.at,
      );
      const event = done.events[0];
      if (event?.type !== 'ForecastPlaced') throw new Error(`seed: the forecast of ${user.handle} on ${c.castieId} produced no ForecastPlaced`);
      c.forecasts.push({ userId: event.data.userId, forecastId: event.data.forecastId, answerId: event.data.answerId, text: event.data.text });
      c.forecasters.push({ user: p.user, at: p.at });
      c.picked.push(p.choice);
    },
    (n) => ctx.progress.advance(n),
  );
  ctx.progress.end();
  return plans.length;
}

export interface AnswersResult {
  answered: number;
  answeredOpenEnded: number;
  correctForecasts: number;
}

/**
 * The creators answer the Casties planned for it (about 80% of those whose end passed, and some
 * open-ended ones) as the answer route does: AnswerCastie with the forecasts that route would
 * gather from the read model, here the ones kept in memory; the decider scores them. The crowd
 * is right more often than not.
 */
export async function seedAnswers(ctx: SeedContext, users: readonly SeedUser[], casties: readonly SeedCastie[]): Promise<AnswersResult> {
  const random = ctx.random('answers');
  const plans = casties
    .filter((c) => c.answerAt !== null)
    .map((c) => {
      const tally = c.choices.map(() => 1);
      for (const k of c.picked) tally[k]! += 1;
      const correct = random.chance(0.6) ? new WeightedIndex(tally).draw(random) : random.int(0, c.choices.length - 1);
      return { c, correct };
    })
    .sort((a, b) => a.c.answerAt! - b.c.answerAt!);

  let answeredOpenEnded = 0;
  let correctForecasts = 0;
  ctx.progress.begin('answers', plans.length);
  await inFlight(
    plans,
    ctx.concurrency,
    async ({ c, correct }) => {
      const creator = users[c.creator]!;
      const at = c.answerAt!;
      const done = await ctx.exec(
        ctx.write.casties,
        castieStreamId(c.castieId),
        {
          type: 'AnswerCastie',
          userId: creator.userId,
          answerId: c.allowWriteIn ? undefined : c.state.castie.options[correct]!.answerId,
          keyword: c.allowWriteIn ? c.choices[correct] : undefined,
          forecasts: c.forecasts,
          now: new Date(at),
        },
        creator.userId,
        at,
      );
      const event = done.events[0];
      if (event?.type === 'CastieAnswered') correctForecasts += event.data.scores.filter((s) => s.correct).length;
      if (c.endsAt === null) answeredOpenEnded++;
    },
    (n) => ctx.progress.advance(n),
  );
  ctx.progress.end();
  return { answered: plans.length, answeredOpenEnded, correctForecasts };
}

/**
 * Posts `total` comments as the comment route does (PostComment on `comment-<uuid>`), spread over
 * the Casties by their activity (busier Casties are talked about more): by the creator, by
 * forecasters, or by anyone who can see the group, after they could see it.
 */
export async function seedComments(ctx: SeedContext, users: readonly SeedUser[], groups: readonly SeedGroup[], casties: readonly SeedCastie[], total: number): Promise<number> {
  const random = ctx.random('comments');
  if (casties.length === 0 || total === 0) return 0;
  const byActivity = new WeightedIndex(casties.map((c) => (1 + c.forecasts.length) ** 0.7));
  const everyone = new WeightedIndex(users.map((u) => u.activity));
  const plans: { castie: number; user: number; at: number; text: string }[] = [];
  for (let i = 0; i < total; i++) {
    const ci = byActivity.draw(random);
    const c = casties[ci]!;
    const group = groups[c.group]!;
    let author = { user: c.creator, from: c.createdAt };
    const r = random.next();
    if (r > 0.15 && r < 0.75 && c.forecasters.length > 0) {
      const f = random.pick(c.forecasters);
      author = { user: f.user, from: f.at };
    } else if (r >= 0.75) {
      if (group.state.requiresApproval) {
        const f = random.pick(group.followers);
        author = { user: f.user, from: f.since };
      } else {
        const user = everyone.draw(random);
        author = { user, from: users[user]!.joinedAt };
      }
    }
    let lo = Math.max(c.createdAt, author.from) + 30_000;
    if (lo >= ctx.now - 1000) {
      author = { user: c.creator, from: c.createdAt };
      lo = c.createdAt + 30_000;
    }
    const hi = Math.min(ctx.now - 1000, Math.max(c.closeAt, lo) + 7 * DAY);
    const at = lo + (hi - lo) * random.next() ** 1.5;
    const line = random.pick(COMMENTS);
    const text = random.chance(0.3) ? `${line} ${random.pick(c.choices)}?` : line;
    plans.push({ castie: ci, user: author.user, at, text });
  }
  plans.sort((a, b) => a.at - b.at);

  ctx.progress.begin('comments', plans.length);
  await inFlight(
    plans,
    ctx.concurrency,
    async (p) => {
      const c = casties[p.castie]!;
      const user = users[p.user]!;
      const commentId = newId();
      await ctx.exec(ctx.write.comments, commentStreamId(commentId), { type: 'PostComment', commentId, castieId: c.castieId, userId: user.userId, text: p.text, now: new Date(p.at) }, user.userId, p.at);
    },
    (n) => ctx.progress.advance(n),
  );
  ctx.progress.end();
  return plans.length;
}

import { apiDate, apiTimeSeconds, needsAnswerFilter, type Notification, type NotificationType } from '@castie/contracts';
import { cursorParts, instantKey, keysetPage, listPageDefault, type DocumentStore, type PageRequest } from '@castie/platform';
import type { GroupDirectory, People, PersonDoc } from '@castie/reference';
import { collections, type ActivityDoc, type CastieInfoDoc, type NotificationDoc } from './projection.ts';

/** How far back notifications worked out when read (activity, new Casties) reach. */
const WINDOW_MS = 7 * 24 * 3600_000;
/** Notifications shown at most (newest first); counts stop there too (clients show "99+"). */
const LIST_LIMIT = 100;
/** Forecasts are noticed on the creator's latest Casties only; older ones rarely get any. */
const MY_CASTIES_LIMIT = 200;

/** A notification before it is rendered. */
interface Item {
  id: string | null;
  type: NotificationType;
  createdAt: string;
  data: string;
  message: string;
}

/** "just now", "5 minutes ago", "3 days ago", … */
export function timeSince(then: Date, now: Date): string {
  const seconds = Math.max(0, Math.floor((now.getTime() - then.getTime()) / 1000));
  const units: [number, string][] = [
    [365 * 86400, 'year'],
    [30 * 86400, 'month'],
    [7 * 86400, 'week'],
    [86400, 'day'],
    [3600, 'hour'],
    [60, 'minute'],
  ];
  for (const [size, name] of units) {
    const n = Math.floor(seconds / size);
    if (n >= 1) return `${n} ${name}${n === 1 ? '' : 's'} ago`;
  }
  return 'just now';
}

const quote = (question: string) => `"${question.length > 80 ? `${question.slice(0, 77)}...` : question}"`;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const newestFirst = (a: { createdAt: string }, b: { createdAt: string }) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0);

/**
 * Of events about one thing (a Castie's forecasts, a group's new Casties): those after the last
 * retrieval while there are any (the notification counts up until read), else all of the window.
 */
function unreadOrAll<T extends { at: string }>(events: T[], lastRetrievedAt: string | null): T[] {
  const unread = lastRetrievedAt ? events.filter((e) => e.at > lastRetrievedAt) : events;
  return (unread.length > 0 ? unread : events).sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
}

/**
 * A user's notifications: the stored ones (rendered with today's handles and questions), and
 * those worked out when asked — Casties of theirs waiting for an answer, forecasts on their
 * Casties, forecasts and comments of their frodads in the groups they follow, new Casties in
 * those groups.
 */
export class NotificationViews {
  readonly #c;

  constructor(
    store: DocumentStore,
    private readonly people: People,
    private readonly groups: GroupDirectory,
    private readonly timeZone: string,
  ) {
    this.#c = collections(store);
  }

  async lastRetrievedAt(userId: string): Promise<string | null> {
    return (await this.#c.inboxes.findOne({ _id: userId }))?.lastRetrievedAt ?? null;
  }

  /** The user's Casties with an end date that ended and wait for their answer, latest end first. */
  needingAnswer(userId: string, now: Date): Promise<CastieInfoDoc[]> {
    return this.#c.casties.find(needsAnswerFilter(userId, now), { sort: { endsAt: -1 } });
  }

  private async stored(userId: string, now: Date, since: string | null, limit?: number): Promise<Item[]> {
    const docs = await this.#c.notifications.find({ userId, createdAt: { $lte: now.toISOString(), ...(since ? { $gt: since } : {}) } }, { sort: { createdAt: -1 }, ...(limit ? { limit } : {}) });
    return this.render(docs);
  }

  /** Stored notifications as items, with today's handles, questions and group names; those about deleted accounts vanish. */
  private async render(docs: readonly NotificationDoc[]): Promise<Item[]> {
    const actors = await this.people.activeByIds(docs.flatMap((d) => (d.actorId ? [d.actorId] : [])));
    const questions = await this.questions(docs.flatMap((d) => (d.castieId ? [d.castieId] : [])));
    const names = await this.groups.namesOf([...new Set(docs.flatMap((d) => (d.groupSlug ? [d.groupSlug] : [])))]);
    const items: Item[] = [];
    for (const d of docs) {
      const actor = d.actorId ? actors.get(d.actorId) : undefined;
      // A notification about someone whose account is gone vanishes with them.
      if (d.actorId && !actor) continue;
      items.push(this.storedItem(d, actor, questions, names));
    }
    return items;
  }

  private storedItem(d: NotificationDoc, actor: PersonDoc | undefined, questions: Map<string, string>, names: Map<string, string>): Item {
    const base = { id: d._id, type: d.type, createdAt: d.createdAt };
    switch (d.type) {
      case 'friend-request-received':
        return { ...base, data: actor!.handle, message: `@${actor!.handle} has sent you a friendship request` };
      case 'friend-request-accepted':
        return { ...base, data: actor!.handle, message: `@${actor!.handle} has accepted your friendship request` };
      case 'group-access-granted':
        return { ...base, data: d.groupSlug ?? '', message: `You have been approved to join the ${names.get(d.groupSlug ?? '') ?? d.groupSlug} group` };
      default:
        return { ...base, data: d.castieId ?? '', message: `The answer to ${quote(questions.get(d.castieId ?? '') ?? 'your Castie')} is in- see how you did!` };
    }
  }

  private async questions(castieIds: string[]): Promise<Map<string, string>> {
    const questions = new Map<string, string>();
    for (const [id, castie] of await this.#c.casties.byIds(castieIds)) questions.set(id, castie.question);
    return questions;
  }

  /**
   * Forecasts on the user's Casties; forecasts and comments of frodads in followed groups: the
   * events of the window (or only those after `after`), by notification (type and Castie).
   */
  private async activity(userId: string, now: Date, after: string | null) {
    const windowStart = new Date(now.getTime() - WINDOW_MS).toISOString();
    const range = after && after >= windowStart ? { $gt: after, $lte: now.toISOString() } : { $gte: windowStart, $lte: now.toISOString() };
    const [mine, friendIds, followed] = await Promise.all([this.#c.casties.find({ creatorId: userId }, { sort: { createdAt: -1 }, limit: MY_CASTIES_LIMIT }), this.people.friendIds(userId), this.groups.followedSlugs(userId)]);
    // Private people's activity stays private, from their frodads too.
    const friends = new Map([...(await this.people.activeByIds(friendIds))].filter(([, p]) => !p.isPrivate));
    const [onMine, byFriends] = await Promise.all([
      mine.length ? this.#c.activity.find({ kind: 'forecast', castieId: { $in: mine.map((c) => c._id) }, at: range, actorId: { $ne: userId } }) : Promise.resolve([] as ActivityDoc[]),
      friends.size && followed.length ? this.#c.activity.find({ actorId: { $in: [...friends.keys()] }, at: range, groupSlug: { $in: followed } }) : Promise.resolve([] as ActivityDoc[]),
    ]);
    const castieIds = [...new Set([...onMine, ...byFriends].map((a) => a.castieId))];
    const casties = await this.#c.casties.byIds(castieIds);
    const actors = await this.people.activeByIds(onMine.map((a) => a.actorId));
    for (const [id, person] of friends) actors.set(id, person);
    const following = new Set(followed);

    const notifications = new Map<string, { type: NotificationType; castieId: string; events: ActivityDoc[] }>();
    const add = (type: NotificationType, a: ActivityDoc) => {
      const key = `${type}:${a.castieId}`;
      const entry = notifications.get(key) ?? notifications.set(key, { type, castieId: a.castieId, events: [] }).get(key)!;
      entry.events.push(a);
    };
    for (const a of onMine) if (actors.has(a.actorId)) add('castie-forecasted', a);
    for (const a of byFriends) {
      const castie = casties.get(a.castieId);
      if (!castie || !following.has(castie.groupSlug)) continue;
      if (a.kind === 'comment') add('castie-friend-commented', a);
      // The creator already hears of every forecast on their Castie.
      else if (castie.creatorId !== userId) add('castie-friend-forecasted', a);
    }
    return { notifications: [...notifications.values()], actors, casties };
  }

  /** The notifications of the window's activity, counting what came after the last retrieval while there is any. */
  private async fromActivity(userId: string, now: Date, lastRetrievedAt: string | null): Promise<Item[]> {
    const { notifications, actors, casties } = await this.activity(userId, now, null);
    return notifications.map(({ type, castieId, events }) => {
      const shown = unreadOrAll(events, lastRetrievedAt);
      const latest = shown[0]!;
      const handle = `@${actors.get(latest.actorId)!.handle}`;
      const question = quote(casties.get(castieId)?.question ?? 'a Castie');
      const others = new Set(shown.map((a) => a.actorId)).size - 1;
      const message =
        type === 'castie-forecasted'
          ? `${handle}${others > 0 ? ` and ${plural(others, 'other')}` : ''} forecasted your Castie ${question}`
          : type === 'castie-friend-forecasted'
            ? `${handle}${others > 0 ? ` and ${plural(others, 'other frodad')}` : ''} forecasted ${question}`
            : `${handle}${others > 0 ? ` and ${plural(others, 'other frodad')}` : ''} commented on ${question}`;
      return { id: `${type}:${castieId}`, type, createdAt: latest.at, data: castieId, message };
    });
  }

  /** Per followed group: where Casties others added count from (the window, or since the user followed), and until. */
  private async addedTo(userId: string, now: Date) {
    const windowStart = new Date(now.getTime() - WINDOW_MS).toISOString();
    return (await this.groups.follows(userId)).map(({ group, since }) => ({
      group,
      added: { groupSlug: group.slug, creatorId: { $ne: userId } },
      from: [windowStart, since ?? windowStart].sort().at(-1)!,
      until: now.toISOString(),
    }));
  }

  /**
   * Per followed group: Casties others added since the user started following (in the window).
   * Counted in the (groupSlug, createdAt, creatorId) index, not read: a busy group adds hundreds
   * a week, and only their number and the newest one's time are shown.
   */
  private async newCasties(userId: string, now: Date, lastRetrievedAt: string | null): Promise<Item[]> {
    const perGroup = await Promise.all(
      (await this.addedTo(userId, now)).map(async ({ group, added, from, until }): Promise<Item | null> => {
        const newest = await this.#c.casties.findOne({ ...added, createdAt: { $gte: from, $lte: until } }, { sort: { createdAt: -1 } });
        if (!newest) return null;
        // As unreadOrAll: those after the last retrieval while there are any, else the whole window.
        const unread = lastRetrievedAt && lastRetrievedAt >= from ? await this.#c.casties.countDocuments({ ...added, createdAt: { $gt: lastRetrievedAt, $lte: until } }) : 0;
        const n = unread > 0 ? unread : await this.#c.casties.countDocuments({ ...added, createdAt: { $gte: from, $lte: until } });
        return {
          id: `new-casties:${group.slug}`,
          type: 'new-casties',
          createdAt: newest.createdAt,
          data: group.slug,
          message: n === 1 ? `A new Castie was added to the ${group.groupName} group` : `${n} new Casties were added to the ${group.groupName} group`,
        };
      }),
    );
    return perGroup.filter((item) => item !== null);
  }

  /** The list: castie-needs-answer first, then the rest newest first (at most the newest 100). */
  async list(userId: string, now: Date): Promise<Notification[]> {
    const lastRetrievedAt = await this.lastRetrievedAt(userId);
    const [stored, derived, fresh, needing] = await Promise.all([
      this.stored(userId, now, null, LIST_LIMIT),
      this.fromActivity(userId, now, lastRetrievedAt),
      this.newCasties(userId, now, lastRetrievedAt),
      this.needingAnswer(userId, now),
    ]);
    const rest = [...stored, ...derived, ...fresh].sort(newestFirst).slice(0, LIST_LIMIT);
    const needs: Item[] = needing.map((c) => ({ id: null, type: 'castie-needs-answer', createdAt: c.endsAt!, data: c._id, message: 'Your Castie has ended- time to answer it!' }));
    return this.shape([...needs, ...rest], now);
  }

  /**
   * One page of every notification, beyond the newest 100 too: newest first in (createdAt, id).
   * Stored notifications come from the (userId, createdAt, _id) index after the cursor, merged
   * with the few worked out on reading (a week's activity, new Casties), which are filtered by the
   * same cursor; castie-needs-answer ones lead the first page only (they are not counted in
   * `limit`). `types` narrows the stream to those notification types.
   */
  async page(userId: string, now: Date, req: PageRequest, types: readonly NotificationType[] | null): Promise<{ list: Notification[]; hasMore: boolean; nextBefore: string | null }> {
    const limit = req.limit ?? listPageDefault;
    const cursor = req.before === undefined ? null : cursorParts(req.before, instantKey);
    const wanted = (i: { type: NotificationType }) => !types || types.includes(i.type);
    const after = (i: Item) => !cursor || i.createdAt < (cursor.key as string) || (i.createdAt === cursor.key && (i.id ?? '') < cursor.id);
    const lastRetrievedAt = await this.lastRetrievedAt(userId);
    const [stored, derived, fresh, needing] = await Promise.all([
      keysetPage(this.#c.notifications, req, {
        filter: { userId, createdAt: { $lte: now.toISOString() } },
        key: 'createdAt',
        direction: -1,
        parseKey: instantKey,
        keep: async (docs) => {
          const shown = new Set((await this.render(docs.filter(wanted))).map((i) => i.id));
          return docs.filter((d) => shown.has(d._id));
        },
      }),
      this.fromActivity(userId, now, lastRetrievedAt),
      this.newCasties(userId, now, lastRetrievedAt),
      cursor ? Promise.resolve([] as CastieInfoDoc[]) : this.needingAnswer(userId, now),
    ]);
    const newestFirstById = (a: Item, b: Item) => newestFirst(a, b) || ((a.id ?? '') < (b.id ?? '') ? 1 : -1);
    const merged = [...(await this.render(stored.items)), ...[...derived, ...fresh].filter((i) => wanted(i) && after(i))].sort(newestFirstById);
    const items = merged.slice(0, limit);
    const hasMore = merged.length > limit || stored.hasMore;
    const last = items.at(-1);
    const needs: Item[] = wanted({ type: 'castie-needs-answer' }) ? needing.map((c) => ({ id: null, type: 'castie-needs-answer', createdAt: c.endsAt!, data: c._id, message: 'Your Castie has ended- time to answer it!' })) : [];
    return { list: this.shape([...needs, ...items], now), hasMore, nextBefore: hasMore && last ? `${last.createdAt}|${last.id}` : null };
  }

  /**
   * One page of the own-data export's notifications: every one of the person's, read without
   * marking anything read. The stored ones are paged from the (userId, createdAt, _id) index,
   * newest first, `limit` at a time after the cursor `after` (`<createdAt>|<id>`, the `next` of the
   * previous page). Those worked out on reading (Casties waiting for an answer, a week's activity,
   * new Casties in followed groups) are computed once, on the first page (no `after`), and lead it:
   * they are few items (one per Castie or group) but costly to work out (new Casties reads every
   * Castie of the week in each followed group), so they are not recomputed for every page, and
   * pages after the first cost one index range each whatever the person's history.
   */
  async exportPage(userId: string, now: Date, after: string | null, limit: number): Promise<{ items: Notification[]; next: string | null }> {
    const first = after === null;
    const [stored, worked] = await Promise.all([
      keysetPage(this.#c.notifications, { limit, ...(first ? {} : { before: after }) }, {
        filter: { userId, createdAt: { $lte: now.toISOString() } },
        key: 'createdAt',
        direction: -1,
        parseKey: instantKey,
        keep: async (docs) => {
          const shown = new Set((await this.render(docs)).map((i) => i.id));
          return docs.filter((d) => shown.has(d._id));
        },
      }),
      first ? this.workedOut(userId, now) : Promise.resolve([] as Item[]),
    ]);
    return { items: this.shape([...worked, ...(await this.render(stored.items))], now), next: stored.nextBefore };
  }

  /** The notifications worked out on reading: castie-needs-answer first, then the rest newest first. */
  private async workedOut(userId: string, now: Date): Promise<Item[]> {
    const lastRetrievedAt = await this.lastRetrievedAt(userId);
    const [derived, fresh, needing] = await Promise.all([this.fromActivity(userId, now, lastRetrievedAt), this.newCasties(userId, now, lastRetrievedAt), this.needingAnswer(userId, now)]);
    const needs: Item[] = needing.map((c) => ({ id: null, type: 'castie-needs-answer', createdAt: c.endsAt!, data: c._id, message: 'Your Castie has ended- time to answer it!' }));
    return [...needs, ...[...derived, ...fresh].sort(newestFirst)];
  }

  private shape(items: Item[], now: Date): Notification[] {
    return items.map((item) => ({
      id: item.id,
      created_on_date: apiDate(item.createdAt, this.timeZone),
      created_on_time: apiTimeSeconds(item.createdAt, this.timeZone),
      timesince_created: timeSince(new Date(item.createdAt), now),
      message: item.message,
      notification_type: item.type,
      data: item.data,
    }));
  }

  /**
   * Counts for the indicator: notifications created after `since` (null: all), plus one for all
   * Casties waiting for an answer together (they never become read). A notification worked out on
   * reading is new when its newest event is, so only the events after `since` are read: a
   * person's notifications of the week's activity, and a group's new Casties, count when they
   * have one.
   */
  async counts(userId: string, now: Date, since: string | null) {
    const [stored, activity, groupsWithNew, needing] = await Promise.all([
      this.stored(userId, now, since, LIST_LIMIT),
      this.activity(userId, now, since),
      this.addedTo(userId, now).then((groups) =>
        Promise.all(groups.map(({ added, from, until }) => this.#c.casties.findOne({ ...added, createdAt: since && since >= from ? { $gt: since, $lte: until } : { $gte: from, $lte: until } }))),
      ),
      this.needingAnswer(userId, now),
    ]);
    return {
      number_notifications: Math.min(LIST_LIMIT, stored.length + activity.notifications.length + groupsWithNew.filter((newest) => newest !== null).length) + (needing.length > 0 ? 1 : 0),
      needs_answer: needing.length > 0,
      number_needing_answer: needing.length,
    };
  }
}

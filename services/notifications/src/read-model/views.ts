import { apiDate, apiTimeSeconds, type Notification, type NotificationType } from '@castie/contracts';
import type { DocumentStore } from '@castie/platform';
import { GROUP_MEMBERSHIPS, membershipId, type GroupDirectory, type MembershipDoc, type People } from '@castie/reference';
import { collections, type NotificationDoc } from './projection.ts';

/** How long read new-Casties notifications stay in the list. */
const NEW_CASTIES_WINDOW_MS = 7 * 24 * 3600_000;
/** Notifications shown at most (newest first). */
const LIST_LIMIT = 100;

/** A notification before it is rendered: when, what, and what to say. */
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

/**
 * Everything a user's notifications are made of: stored ones (rendered with today's handles,
 * questions and group names), Casties of theirs waiting for an answer, and new Casties in the
 * groups they follow — the last two derived from the read models when asked.
 */
export class NotificationViews {
  readonly #c;
  readonly #memberships;

  constructor(
    store: DocumentStore,
    private readonly people: People,
    private readonly groups: GroupDirectory,
    private readonly timeZone: string,
  ) {
    this.#c = collections(store);
    this.#memberships = store.collection<MembershipDoc>(GROUP_MEMBERSHIPS);
  }

  async lastRetrievedAt(userId: string): Promise<string | null> {
    return (await this.#c.inboxes.findOne({ _id: userId }))?.lastRetrievedAt ?? null;
  }

  /** The user's Casties with an end date that ended and wait for their answer, latest end first. */
  async needingAnswer(userId: string, now: Date) {
    const mine = await this.#c.casties.find({ creatorId: userId, answered: false, endsAt: { $ne: null, $lte: now.toISOString() } }, { sort: { endsAt: -1 } });
    return mine;
  }

  /** Per followed group: Casties others added since the user started following (and recently). */
  private async newCasties(userId: string, now: Date, lastRetrievedAt: string | null): Promise<Item[]> {
    const followed = await this.groups.followedGroups(userId);
    const items: Item[] = [];
    const windowStart = new Date(now.getTime() - NEW_CASTIES_WINDOW_MS).toISOString();
    for (const group of followed) {
      const membership = await this.#memberships.findOne({ _id: membershipId(group.slug, userId) });
      const from = [windowStart, membership?.since ?? windowStart].sort().at(-1)!;
      const added = await this.#c.casties.find({ groupSlug: group.slug, createdAt: { $gte: from, $lte: now.toISOString() }, creatorId: { $ne: userId } }, { sort: { createdAt: -1 } });
      if (added.length === 0) continue;
      // Unread ones are counted until read; once read, the notification stays as it was.
      const unread = lastRetrievedAt ? added.filter((c) => c.createdAt > lastRetrievedAt) : added;
      const shown = unread.length > 0 ? unread : added;
      const n = shown.length;
      items.push({
        id: `new-casties:${group.slug}:${shown[0]!.createdAt}`,
        type: 'new-casties',
        createdAt: shown[0]!.createdAt,
        data: group.slug,
        message: n === 1 ? `A new Castie was added to the ${group.groupName} group` : `${n} new Casties were added to the ${group.groupName} group`,
      });
    }
    return items;
  }

  private async render(docs: NotificationDoc[]): Promise<Item[]> {
    const actors = await this.people.activeByIds(docs.flatMap((d) => (d.actorId ? [d.actorId] : [])));
    const castieIds = [...new Set(docs.flatMap((d) => (d.castieId ? [d.castieId] : [])))];
    const casties = new Map((castieIds.length ? await this.#c.casties.find({ _id: { $in: castieIds } }) : []).map((c) => [c._id, c]));
    const names = await this.groups.namesOf([...new Set(docs.flatMap((d) => (d.groupSlug ? [d.groupSlug] : [])))]);
    const items: Item[] = [];
    for (const d of docs) {
      const actor = d.actorId ? actors.get(d.actorId) : null;
      // A notification about someone whose account is gone vanishes with them.
      if (d.actorId && !actor) continue;
      const handle = actor ? `@${actor.handle}` : '';
      const question = d.castieId ? quote(casties.get(d.castieId)?.question ?? 'a Castie') : '';
      const others = d.count - 1;
      const message = ((): string => {
        switch (d.type) {
          case 'friend-request-received':
            return `${handle} has sent you a friendship request`;
          case 'friend-request-accepted':
            return `${handle} has accepted your friendship request`;
          case 'group-access-granted':
            return `You have been approved to join the ${names.get(d.groupSlug ?? '') ?? d.groupSlug} group`;
          case 'castie-forecasted':
            return others > 0 ? `${handle} and ${others} other${others === 1 ? '' : 's'} forecasted your Castie ${question}` : `${handle} forecasted your Castie ${question}`;
          case 'castie-friend-forecasted':
            return others > 0 ? `${handle} and ${others} other frodad${others === 1 ? '' : 's'} forecasted ${question}` : `${handle} forecasted ${question}`;
          case 'castie-friend-commented':
            return others > 0 ? `${handle} commented on ${question} (${d.count} comments from your frodads)` : `${handle} commented on ${question}`;
          case 'castie-answered':
            return `The answer to ${question} is in- see how you did!`;
          case 'castie-needs-answer':
          case 'new-casties':
            return '';
          default: {
            const unknown: never = d.type;
            return unknown;
          }
        }
      })();
      const data = d.type === 'friend-request-received' || d.type === 'friend-request-accepted' ? (actor?.handle ?? '') : d.type === 'group-access-granted' ? (d.groupSlug ?? '') : (d.castieId ?? '');
      items.push({ id: d._id, type: d.type, createdAt: d.createdAt, data, message });
    }
    return items;
  }

  /** The list: castie-needs-answer first, then the rest newest first. */
  async list(userId: string, now: Date): Promise<Notification[]> {
    const lastRetrievedAt = await this.lastRetrievedAt(userId);
    const [stored, needing, fresh] = await Promise.all([
      this.#c.notifications.find({ userId, createdAt: { $lte: now.toISOString() } }, { sort: { createdAt: -1 }, limit: LIST_LIMIT }),
      this.needingAnswer(userId, now),
      this.newCasties(userId, now, lastRetrievedAt),
    ]);
    const rest = [...(await this.render(stored)), ...fresh].sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0)).slice(0, LIST_LIMIT);
    const needs: Item[] = needing.map((c) => ({ id: null, type: 'castie-needs-answer', createdAt: c.endsAt!, data: c._id, message: 'Your Castie has ended- time to answer it!' }));
    return [...needs, ...rest].map((item) => ({
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
   * Casties waiting for an answer together (they never become read).
   */
  async counts(userId: string, now: Date, since: string | null) {
    const needing = await this.needingAnswer(userId, now);
    const filter = { userId, createdAt: { $lte: now.toISOString(), ...(since ? { $gt: since } : {}) } };
    const stored = await this.render(await this.#c.notifications.find(filter));
    const fresh = (await this.newCasties(userId, now, since)).filter((i) => !since || i.createdAt > since);
    return {
      number_notifications: stored.length + fresh.length + (needing.length > 0 ? 1 : 0),
      needs_answer: needing.length > 0,
      number_needing_answer: needing.length,
    };
  }
}

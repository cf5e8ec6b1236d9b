import { groupStreamId, membershipStreamId, type GroupState } from '@castie/groups';
import { DAY, HOUR, MINUTE, type SeedContext } from './context.ts';
import { inFlight } from './in-flight.ts';
import type { SeedUser } from './people.ts';
import { groupNameOf, slugOf, type Topic } from './vocabulary.ts';

type CreatedGroup = Extract<GroupState, { status: 'created' }>;

export interface Follower {
  user: number;
  /** From when the follower sees the group's Casties and may create there: followed, or granted. */
  since: number;
}

export interface SeedGroup {
  slug: string;
  topic: Topic;
  createdAt: number;
  /** Zipf-like weight: the most popular group 1, the next 1/2, 1/3... */
  popularity: number;
  state: CreatedGroup;
  /** Sorted by `since`. */
  followers: Follower[];
}

/** Slug of the k-th group ever seeded (a pure function of k, see groupNameOf). */
export const seedGroupSlug = (k: number): string => slugOf(groupNameOf(k).name);

/**
 * Creates `count` groups the way the admin API does (CreateGroup on `group-<slug>`, actor
 * `admin`), during the history's first month. About 10% require approval. Popularity follows a
 * Zipf law over a shuffled order, so the most followed group is not simply the first one.
 */
export async function seedGroups(ctx: SeedContext, count: number, first: number): Promise<SeedGroup[]> {
  const random = ctx.random('groups');
  const ranks = random.shuffle(Array.from({ length: count }, (_, i) => i));
  const approval = new Set(random.shuffle(Array.from({ length: count }, (_, i) => i)).slice(0, Math.round(count * 0.1)));
  const plans = Array.from({ length: count }, (_, i) => {
    const { name, topic } = groupNameOf(first + i);
    const requiresApproval = approval.has(i);
    return {
      slug: slugOf(name),
      name,
      topic,
      requiresApproval,
      createdAt: ctx.start + (i / count) * 30 * DAY + random.between(0, HOUR),
      popularity: 1 / (ranks[i]! + 1),
    };
  });

  const groups: SeedGroup[] = new Array(count);
  ctx.progress.begin('groups', count);
  await inFlight(
    plans.map((plan, i) => ({ plan, i })),
    ctx.concurrency,
    async ({ plan, i }) => {
      const done = await ctx.exec(
        ctx.write.groups,
        groupStreamId(plan.slug),
        {
          type: 'CreateGroup',
          slug: plan.slug,
          groupName: plan.name,
          groupInfoText: plan.topic.info,
          groupIcon: '',
          requiresApproval: plan.requiresApproval,
          accessDeniedMessage: plan.requiresApproval ? `${plan.name} is invite only: ask to follow and an admin will let you in.` : '',
          restrictCreation: false,
        },
        'admin',
        plan.createdAt,
      );
      if (done.state.status !== 'created') throw new Error(`seed: group ${plan.slug} was not created`);
      groups[i] = { slug: plan.slug, topic: plan.topic, createdAt: plan.createdAt, popularity: plan.popularity, state: done.state, followers: [] };
    },
    (n) => ctx.progress.advance(n),
  );
  ctx.progress.end();
  return groups;
}

interface FollowPlan {
  user: number;
  group: number;
  at: number;
  /** When an operator grants access (approval-required groups); null on public groups and for pending requests. */
  grantedAt: number | null;
}

export interface FollowsResult {
  follows: number;
  granted: number;
  pending: number;
  admins: number;
  hubGroups: number;
}

/**
 * Follows as groups' routes make them: Follow on `membership-<slug>-<userId>`; on approval-required
 * groups that is a request, which an operator grants (GrantAccess, actor `admin`) a few hours
 * later. Each person follows 8 to 15 groups drawn by popularity, the hub 10 including the three
 * most popular. About 5% more requests to approval groups are left pending, and each approval
 * group gets its earliest granted follower as admin (NameAdmin), so someone can answer them.
 */
export async function seedFollows(ctx: SeedContext, users: readonly SeedUser[], groups: SeedGroup[]): Promise<FollowsResult> {
  const random = ctx.random('follows');
  const popularity = groups.map((g) => g.popularity);
  const byPopularity = groups.map((_, i) => i).sort((a, b) => popularity[b]! - popularity[a]!);
  const plans: FollowPlan[] = [];
  const following = new Set<number>();
  const key = (user: number, group: number) => user * groups.length + group;

  const timeOf = (user: number, group: number) => {
    const lo = Math.max(users[user]!.joinedAt + 10 * MINUTE, groups[group]!.createdAt + HOUR);
    const hi = ctx.now - 2 * HOUR;
    // Most follow soon after joining; some discover a group later.
    return Math.min(hi, random.chance(0.7) ? lo + random.exponential(2 * DAY) : random.between(lo, hi));
  };
  const plan = (user: number, group: number, pending = false) => {
    following.add(key(user, group));
    const at = timeOf(user, group);
    const grantedAt = groups[group]!.state.requiresApproval && !pending ? Math.min(ctx.now - MINUTE, at + 10 * MINUTE + random.exponential(12 * HOUR)) : null;
    plans.push({ user, group, at, grantedAt });
  };

  users.forEach((_, user) => {
    const hub = user === 0;
    const count = Math.min(groups.length, hub ? 10 : random.int(8, 15));
    const top = hub ? byPopularity.slice(0, Math.min(3, count)) : [];
    const rest = random.weightedSample(popularity.map((p, g) => (top.includes(g) ? 0 : p)), count - top.length);
    for (const group of [...top, ...rest]) plan(user, group);
  });

  // Requests nobody answered yet, from people who do not follow the group.
  let pending = 0;
  groups.forEach((group, g) => {
    if (!group.state.requiresApproval) return;
    const followers = plans.filter((p) => p.group === g).length;
    const wanted = Math.min(Math.round(followers * 0.05), users.length - followers);
    for (let attempts = 0, made = 0; made < wanted && attempts < 100 * wanted; attempts++) {
      const user = random.int(0, users.length - 1);
      if (following.has(key(user, g))) continue;
      plan(user, g, true);
      made++;
      pending++;
    }
  });
  plans.sort((a, b) => a.at - b.at);

  for (const p of plans) {
    if (groups[p.group]!.state.requiresApproval && p.grantedAt === null) continue;
    groups[p.group]!.followers.push({ user: p.user, since: p.grantedAt ?? p.at });
  }
  for (const group of groups) group.followers.sort((a, b) => a.since - b.since);
  const admins = groups.flatMap((group) => (group.state.requiresApproval && group.followers.length > 0 ? [{ group, admin: group.followers[0]! }] : []));

  ctx.progress.begin('follows', plans.length + admins.length);
  await inFlight(
    plans,
    ctx.concurrency,
    async (p) => {
      const user = users[p.user]!;
      const group = groups[p.group]!.state;
      const stream = membershipStreamId(group.slug, user.userId);
      await ctx.exec(ctx.write.memberships, stream, { type: 'Follow', group, userId: user.userId, handle: user.handle }, user.userId, p.at);
      if (p.grantedAt !== null) await ctx.exec(ctx.write.memberships, stream, { type: 'GrantAccess', group, userId: user.userId, handle: user.handle, by: 'admin' }, 'admin', p.grantedAt);
    },
    (n) => ctx.progress.advance(n),
  );
  await inFlight(
    admins,
    ctx.concurrency,
    async ({ group, admin }) => {
      const done = await ctx.exec(ctx.write.groups, groupStreamId(group.slug), { type: 'NameAdmin', userId: users[admin.user]!.userId }, 'admin', Math.min(ctx.now - MINUTE, admin.since + HOUR));
      if (done.state.status === 'created') group.state = done.state;
    },
    (n) => ctx.progress.advance(n),
  );
  ctx.progress.end();

  return {
    follows: plans.length - pending,
    granted: plans.filter((p) => p.grantedAt !== null).length,
    pending,
    admins: admins.length,
    hubGroups: plans.filter((p) => p.user === 0).length,
  };
}

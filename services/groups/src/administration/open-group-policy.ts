import { DomainError, groupEvents, GROUPS_TOPIC, IDENTITY_TOPIC } from '@castie/contracts';
import { policyEventOf, POLICY_BATCH, type EventLog, type Subscription } from '@castie/platform';
import type { FastifyBaseLogger } from 'fastify';
import type { GroupsContext } from '../context.ts';
import { membershipStreamId } from '../following/membership-decider.ts';

/** What letting the waiting requests in uses of the service. */
export type OpeningContext = Pick<GroupsContext, 'readModels' | 'loadGroup' | 'directory' | 'people' | 'memberships' | 'meta'>;

/**
 * A group that stops requiring approval lets in everyone who was waiting: they asked to join a
 * group that now takes anyone, so they join, and are told so (GroupAccessGranted is the "You have
 * been approved" notification). Requests answered meanwhile are left as they are. Resolves with
 * the handles let in, and whether every request appended before the call was seen (false: the
 * read models did not catch up in time, and requests they lacked wait still).
 *
 * `waitedBefore`: users the caller saw waiting before it opened the group. Those let in meanwhile
 * (by the policy checking this same opening, which may list them first) count as let in.
 */
export async function grantPending(ctx: OpeningContext, slug: string, waitedBefore: readonly string[] = []): Promise<{ granted: string[]; complete: boolean }> {
  // Every request appended before now, whichever partition holds it.
  const complete = await ctx.readModels.catchUp([GROUPS_TOPIC, IDENTITY_TOPIC]);
  const group = await ctx.loadGroup(slug);
  if (group.requiresApproval) return { granted: [], complete };
  const waiting = [...new Set([...waitedBefore, ...(await ctx.directory.pendingOf(slug)).map((p) => p.userId)])];
  const people = await ctx.people.activeByIds(waiting);
  const granted: string[] = [];
  for (const userId of waiting) {
    const person = people.get(userId);
    if (!person) continue;
    const streamId = membershipStreamId(slug, userId);
    try {
      await ctx.memberships.handle(streamId, { type: 'GrantAccess', group, userId, handle: person.handle, by: 'admin' }, ctx.meta('admin'));
      granted.push(person.handle);
    } catch (error) {
      if (!(error instanceof DomainError && error.errorType === 'improper_group_request')) throw error;
      // Answered since it was listed. Let in meanwhile (granted): by this opening all the same.
      // Denied, withdrawn, or following again on their own (access null): not.
      const { state } = await ctx.memberships.load(streamId);
      if (state.status === 'following' && state.access === 'granted') granted.push(person.handle);
    }
  }
  // Operators have no session: the answer shows every grant, this call's and those made meanwhile.
  if (granted.length > 0) await ctx.readModels.catchUp([GROUPS_TOPIC]);
  return { granted, complete };
}

/**
 * A policy: no request waits in a group that no longer requires approval, those made at the
 * moment it was opened too.
 *
 * A request is decided on the group's stream (approval required) and lands on the membership's;
 * opening the group lands on the group's, then lets in the requests the read models list. Nothing
 * orders the two: a request decided before the opening could land after the read models were
 * read, and waited for an approval nobody gives in a public group. So both writes are checked
 * after they land, each against the other's side, and whichever check comes second sees the
 * other write:
 * - a request: when its group's stream says it no longer requires approval, it is granted now;
 * - an opening: once the read models hold every request the log has now, those still waiting are
 *   granted now (what the operator's configure call did already, when its read models were in
 *   time).
 * Granting twice is refused by the membership's decider and skipped. Driven by the log, so a
 * crash between a write and its check loses nothing.
 */
export async function startOpenGroupPolicy(options: { log: EventLog; ctx: OpeningContext; logger?: FastifyBaseLogger }): Promise<Subscription> {
  const { ctx, logger } = options;
  return options.log.subscribe({
    group: 'groups-open-group-policy',
    topics: [GROUPS_TOPIC],
    startAt: () => 'committed',
    maxBatch: POLICY_BATCH,
    handle: async (records) => {
      for (const record of records) {
        // A membership's stream (membershipStreamId), whose key is that stream's id.
        if (record.key.startsWith('membership-')) {
          const event = policyEventOf(groupEvents, record);
          if (event?.type !== 'GroupAccessRequested') continue;
          const group = await ctx.loadGroup(event.data.slug).catch((error: unknown) => {
            if (error instanceof DomainError) return null;
            throw error;
          });
          if (!group || group.requiresApproval) continue;
          const person = await activePerson(ctx, event.data.userId);
          if (!person) continue;
          try {
            const done = await ctx.memberships.handle(record.key, { type: 'GrantAccess', group, userId: event.data.userId, handle: person.handle, by: 'admin' }, ctx.meta('admin'));
            if (done.events.length > 0) logger?.info({ slug: group.slug, userId: event.data.userId }, 'a request to join a group opened meanwhile was granted');
          } catch (error) {
            if (!(error instanceof DomainError && error.errorType === 'improper_group_request')) throw error;
          }
          continue;
        }
        if (!record.key.startsWith('group-')) continue;
        const event = policyEventOf(groupEvents, record);
        if (event?.type !== 'GroupConfigured' || event.data.requiresApproval !== false) continue;
        const { granted, complete } = await grantPending(ctx, event.data.slug);
        // Until the read models hold every request, the batch fails and the log delivers it again.
        if (!complete) throw new Error(`the requests waiting in group ${event.data.slug} are let in once the groups read models have caught up`);
        if (granted.length > 0) logger?.info({ slug: event.data.slug, granted }, 'requests waiting in a group opened were granted');
      }
    },
  });
}

/**
 * The requester as the read models know them, once they hold the account's events appended
 * before now (a request may come before the read models learned of a new account); null when
 * the account was deleted or never completed its sign-up.
 */
async function activePerson(ctx: OpeningContext, userId: string) {
  const known = (await ctx.people.activeByIds([userId])).get(userId);
  if (known) return known;
  // Until they hold them, the batch fails and the log delivers it again.
  if (!(await ctx.readModels.catchUp([IDENTITY_TOPIC]))) throw new Error(`the request of ${userId} is checked once the groups read models have caught up with identity`);
  return (await ctx.people.activeByIds([userId])).get(userId) ?? null;
}

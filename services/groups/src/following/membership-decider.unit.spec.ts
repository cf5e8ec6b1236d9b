import type { GroupEvent } from '@castie/contracts';
import { deciderSpec } from '@castie/platform/testing';
import { describe, expect, it } from 'vitest';
import { groupMessages, membershipDecider, standing, type GroupFacts, type MembershipCommand } from './membership-decider.ts';

const userId = 'a'.repeat(32);
const adminId = 'd'.repeat(32);
const handle = 'ann';
const open: GroupFacts = { slug: 'sports', requiresApproval: false };
const closed: GroupFacts = { slug: 'insiders', requiresApproval: true };
const spec = deciderSpec(membershipDecider);

const follow = (group: GroupFacts): MembershipCommand => ({ type: 'Follow', group, userId, handle });
const unfollow = (group: GroupFacts): MembershipCommand => ({ type: 'Unfollow', group, userId, handle });
const grant = (by = adminId): MembershipCommand => ({ type: 'GrantAccess', group: closed, userId, handle, by });
const deny = (by = adminId): MembershipCommand => ({ type: 'DenyAccess', group: closed, userId, handle, by });

const followed: GroupEvent = { type: 'GroupFollowed', data: { slug: 'sports', userId } };
const unfollowedOpen: GroupEvent = { type: 'GroupUnfollowed', data: { slug: 'sports', userId } };
const requested: GroupEvent = { type: 'GroupAccessRequested', data: { slug: 'insiders', userId } };
const granted: GroupEvent = { type: 'GroupAccessGranted', data: { slug: 'insiders', userId, grantedBy: adminId } };
const denied: GroupEvent = { type: 'GroupAccessDenied', data: { slug: 'insiders', userId, deniedBy: adminId } };
const unfollowedClosed: GroupEvent = { type: 'GroupUnfollowed', data: { slug: 'insiders', userId } };

const standingAfter = (events: GroupEvent[]) => standing(spec.given(events).state);

describe('membership decider: the spec table "Group access"', () => {
  it('(false, null) + follow, group does not require approval -> (true, null)', () => {
    spec.given([]).when(follow(open)).then([followed]);
    expect(standingAfter([followed])).toEqual({ following: true, access: null });
  });

  it('(false, null) + follow, group requires approval -> (false, pending)', () => {
    spec.given([]).when(follow(closed)).then([requested]);
    expect(standingAfter([requested])).toEqual({ following: false, access: 'pending' });
  });

  it('(true, any) + follow -> unchanged, improper_group_request carrying handle and group_slug', () => {
    for (const [given, group] of [
      [[followed], open],
      [[requested, granted], closed],
    ] as const) {
      spec.given(given).when(follow(group)).thenFails('improper_group_request', groupMessages.alreadyFollowing);
    }
    let thrown: unknown;
    try {
      membershipDecider.decide(follow(open), spec.given([followed]).state);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ extra: { handle: 'ann', group_slug: 'sports' } });
  });

  it('(true, any) + unfollow -> (false, null)', () => {
    spec.given([followed]).when(unfollow(open)).then([unfollowedOpen]);
    spec.given([requested, granted]).when(unfollow(closed)).then([unfollowedClosed]);
    expect(standingAfter([followed, unfollowedOpen])).toEqual({ following: false, access: null });
    expect(standingAfter([requested, granted, unfollowedClosed])).toEqual({ following: false, access: null });
  });

  it('(false, any) + unfollow -> unchanged, improper_group_request', () => {
    spec.given([]).when(unfollow(open)).thenFails('improper_group_request', groupMessages.notFollowing);
    spec.given([requested]).when(unfollow(closed)).thenFails('improper_group_request', groupMessages.notFollowing);
    spec.given([followed, unfollowedOpen]).when(unfollow(open)).thenFails('improper_group_request', groupMessages.notFollowing);
  });

  it('(false, pending) + approval by the group -> (true, granted), GroupAccessGranted for the notification', () => {
    spec.given([requested]).when(grant()).then([granted]);
    spec.given([requested]).when(grant('admin')).then([{ type: 'GroupAccessGranted', data: { slug: 'insiders', userId, grantedBy: 'admin' } }]);
    expect(standingAfter([requested, granted])).toEqual({ following: true, access: 'granted' });
  });
});

describe('membership decider: beyond the table', () => {
  it('asking again while pending changes nothing', () => spec.given([requested]).when(follow(closed)).thenNothing());

  it('asking again after the group stopped requiring approval lets the person in', () => {
    const opened: GroupFacts = { slug: 'insiders', requiresApproval: false };
    spec.given([requested]).when(follow(opened)).then([{ type: 'GroupFollowed', data: { slug: 'insiders', userId } }]);
    expect(standingAfter([requested, { type: 'GroupFollowed', data: { slug: 'insiders', userId } }])).toEqual({ following: true, access: null });
  });

  it('denial ends the request: (false, null), and the user may ask again', () => {
    spec.given([requested]).when(deny()).then([denied]);
    expect(standingAfter([requested, denied])).toEqual({ following: false, access: null });
    spec.given([requested, denied]).when(follow(closed)).then([requested]);
  });

  it('grants and denials need a pending request', () => {
    spec.given([]).when(grant()).thenFails('improper_group_request', /has not requested access/);
    spec.given([]).when(deny()).thenFails('improper_group_request', /has not requested access/);
    spec.given([requested, granted]).when(grant()).thenFails('improper_group_request', /already follows/);
    spec.given([requested, denied]).when(grant()).thenFails('improper_group_request');
  });

  it('after unfollowing an approval-required group, following again needs approval again', () =>
    spec.given([requested, granted, unfollowedClosed]).when(follow(closed)).then([requested]));

  it('re-follows a public group after unfollowing', () => spec.given([followed, unfollowedOpen]).when(follow(open)).then([followed]));
});

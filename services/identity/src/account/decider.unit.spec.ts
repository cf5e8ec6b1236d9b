import type { IdentityEvent } from '@castie/contracts';
import { deciderSpec } from '@castie/platform/testing';
import { describe, it } from 'vitest';
import { accountDecider } from './decider.ts';

const userId = 'a'.repeat(32);
const now = new Date('2026-03-01T12:00:00Z');
const opened: IdentityEvent = { type: 'AccountOpened', data: { userId } };
const named: IdentityEvent = { type: 'ProfileNamed', data: { userId, handle: 'ada', firstName: 'Ada', lastName: 'Lovelace' } };
const completed: IdentityEvent = { type: 'SignUpCompleted', data: { userId, profPic: '' } };
const active = [opened, named, completed];
const spec = deciderSpec(accountDecider);

describe('account decider', () => {
  describe('sign-up', () => {
    it('opens a new account', () => spec.given([]).when({ type: 'OpenAccount', userId }).then([opened]));
    it('does not open an account twice', () => spec.given([opened]).when({ type: 'OpenAccount', userId }).thenFails('account_not_created'));
    it('names an opened account', () => spec.given([opened]).when({ type: 'NameProfile', handle: 'ada', firstName: 'Ada', lastName: 'Lovelace' }).then([named]));
    it('lets the user go back and choose another name', () =>
      spec
        .given([opened, named])
        .when({ type: 'NameProfile', handle: 'ada2', firstName: 'Ada', lastName: 'King' })
        .then([{ type: 'ProfileNamed', data: { userId, handle: 'ada2', firstName: 'Ada', lastName: 'King' } }]));
    it('refuses a name before the password step', () => spec.given([]).when({ type: 'NameProfile', handle: 'ada', firstName: 'A', lastName: 'L' }).thenFails('account_not_created', /password/));
    it('refuses the picture step before the handle step', () => spec.given([opened]).when({ type: 'CompleteSignUp', handle: 'ada', profPic: '', now }).thenFails('account_not_created', /handle first/));
    it('refuses the picture step with another handle', () => spec.given([opened, named]).when({ type: 'CompleteSignUp', handle: 'bob', profPic: '', now }).thenFails('account_not_created'));
    it('completes without a picture', () => spec.given([opened, named]).when({ type: 'CompleteSignUp', handle: 'ADA', profPic: '', now }).then([completed]));
    it('completes with a picture and dates it', () =>
      spec
        .given([opened, named])
        .when({ type: 'CompleteSignUp', handle: 'ada', profPic: '/media/uploads/x.png', now })
        .then([
          { type: 'SignUpCompleted', data: { userId, profPic: '/media/uploads/x.png' } },
          { type: 'ProfilePictureChanged', data: { userId, profPic: '/media/uploads/x.png', changedAt: now.toISOString() } },
        ]));
    it('refuses renaming a complete account through sign-up', () => spec.given(active).when({ type: 'NameProfile', handle: 'x', firstName: 'x', lastName: 'x' }).thenFails('account_not_created'));
    it('abandons an incomplete sign-up', () => spec.given([opened, named]).when({ type: 'AbandonSignUp' }).then([{ type: 'SignUpAbandoned', data: { userId } }]));
    it('does not abandon a complete account', () => spec.given(active).when({ type: 'AbandonSignUp' }).thenFails('not_allowed'));
  });

  describe('profile', () => {
    it('records only the fields that changed', () =>
      spec
        .given(active)
        .when({ type: 'EditProfile', changes: { firstName: 'Ada', lastName: 'King', city: 'London' }, profPic: null, now })
        .then([{ type: 'ProfileEdited', data: { userId, lastName: 'King', city: 'London' } }]));
    it('changes nothing when nothing differs', () => spec.given(active).when({ type: 'EditProfile', changes: { firstName: 'Ada', handle: 'ada' }, profPic: null, now }).thenNothing());
    it('always replaces a sent picture', () =>
      spec
        .given(active)
        .when({ type: 'EditProfile', changes: {}, profPic: '/media/uploads/y.gif', now })
        .then([{ type: 'ProfilePictureChanged', data: { userId, profPic: '/media/uploads/y.gif', changedAt: now.toISOString() } }]));
    it('turns privacy on, and not twice', () => {
      spec.given(active).when({ type: 'SetPrivacy', isPrivate: true }).then([{ type: 'PrivacyChanged', data: { userId, isPrivate: true } }]);
      spec.given([...active, { type: 'PrivacyChanged', data: { userId, isPrivate: true } }]).when({ type: 'SetPrivacy', isPrivate: true }).thenNothing();
    });
  });

  describe('deletion', () => {
    it('deletes an active account, keeping its handle on record', () => spec.given(active).when({ type: 'DeleteAccount' }).then([{ type: 'AccountDeleted', data: { userId, handle: 'ada' } }]));
    it('a deleted account is inactive for every command', () => {
      const deleted = [...active, { type: 'AccountDeleted' as const, data: { userId, handle: 'ada' } }];
      spec.given(deleted).when({ type: 'DeleteAccount' }).thenFails('inactive_user');
      spec.given(deleted).when({ type: 'SetPrivacy', isPrivate: true }).thenFails('inactive_user');
      spec.given(deleted).when({ type: 'EditProfile', changes: { city: 'x' }, profPic: null, now }).thenFails('inactive_user');
    });
  });
});

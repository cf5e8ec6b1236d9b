import type { GroupEvent } from '@castie/contracts';
import { deciderSpec } from '@castie/platform/testing';
import { describe, it } from 'vitest';
import { groupDecider, type GroupCommand } from './group-decider.ts';

const ann = 'a'.repeat(32);
const bob = 'b'.repeat(32);
const create: Extract<GroupCommand, { type: 'CreateGroup' }> = {
  type: 'CreateGroup',
  slug: 'sports',
  groupName: 'Sports',
  groupInfoText: 'all about sports',
  groupIcon: '/media/uploads/x.png',
  requiresApproval: false,
  accessDeniedMessage: '',
  restrictCreation: true,
};
const created: GroupEvent = {
  type: 'GroupCreated',
  data: { slug: 'sports', groupName: 'Sports', groupInfoText: 'all about sports', groupIcon: '/media/uploads/x.png', requiresApproval: false, accessDeniedMessage: '', restrictCreation: true },
};
const spec = deciderSpec(groupDecider);

describe('group decider', () => {
  it('creates a group', () => spec.given([]).when(create).then([created]));

  it('refuses a second group with the same slug', () => spec.given([created]).when({ ...create, groupName: 'Other' }).thenFails('invalid_request', /already exists/));

  it('names admins and creators, once each', () => {
    spec.given([created]).when({ type: 'NameAdmin', userId: ann }).then([{ type: 'GroupAdminNamed', data: { slug: 'sports', userId: ann } }]);
    spec.given([created]).when({ type: 'NameCreator', userId: ann }).then([{ type: 'GroupCreatorNamed', data: { slug: 'sports', userId: ann } }]);
    spec.given([created, { type: 'GroupAdminNamed', data: { slug: 'sports', userId: ann } }]).when({ type: 'NameAdmin', userId: ann }).thenNothing();
    spec.given([created, { type: 'GroupCreatorNamed', data: { slug: 'sports', userId: ann } }]).when({ type: 'NameCreator', userId: ann }).thenNothing();
    spec.given([created, { type: 'GroupCreatorNamed', data: { slug: 'sports', userId: ann } }]).when({ type: 'NameCreator', userId: bob }).then([{ type: 'GroupCreatorNamed', data: { slug: 'sports', userId: bob } }]);
  });

  it('names nobody in a group that does not exist', () => {
    spec.given([]).when({ type: 'NameAdmin', userId: ann }).thenFails('object_not_found', 'the requested group could not be found');
    spec.given([]).when({ type: 'NameCreator', userId: ann }).thenFails('object_not_found');
  });
});

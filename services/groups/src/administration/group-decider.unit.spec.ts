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

  describe('configuring', () => {
    const configure = (settings: Omit<Extract<GroupCommand, { type: 'ConfigureGroup' }>, 'type'>): GroupCommand => ({ type: 'ConfigureGroup', ...settings });

    it('records only the settings that change', () =>
      spec
        .given([created])
        .when(configure({ groupName: 'Sport', groupInfoText: 'all about sports', groupIcon: '/media/uploads/y.png', requiresApproval: true }))
        .then([{ type: 'GroupConfigured', data: { slug: 'sports', groupName: 'Sport', groupIcon: '/media/uploads/y.png', requiresApproval: true } }]));

    it('decides against the settings as configured so far', () => {
      const renamed: GroupEvent = { type: 'GroupConfigured', data: { slug: 'sports', groupName: 'Sport', restrictCreation: false } };
      spec.given([created, renamed]).when(configure({ groupName: 'Sport' })).thenFails('invalid_request', 'nothing has changed- no data to update');
      spec.given([created, renamed]).when(configure({ groupName: 'Sports', restrictCreation: true })).then([{ type: 'GroupConfigured', data: { slug: 'sports', groupName: 'Sports', restrictCreation: true } }]);
      spec.given([created, renamed]).when(configure({ accessDeniedMessage: 'ask Ann' })).then([{ type: 'GroupConfigured', data: { slug: 'sports', accessDeniedMessage: 'ask Ann' } }]);
    });

    it('refuses a configuration that changes nothing, or sends nothing', () => {
      spec.given([created]).when(configure({ groupName: 'Sports', requiresApproval: false })).thenFails('invalid_request', 'nothing has changed- no data to update');
      spec.given([created]).when(configure({})).thenFails('missing_request_data', /at least one of groupName/);
    });

    it('configures no group that does not exist', () => spec.given([]).when(configure({ groupName: 'Sport' })).thenFails('object_not_found', 'the requested group could not be found'));
  });

  it('names nobody in a group that does not exist', () => {
    spec.given([]).when({ type: 'NameAdmin', userId: ann }).thenFails('object_not_found', 'the requested group could not be found');
    spec.given([]).when({ type: 'NameCreator', userId: ann }).thenFails('object_not_found');
  });
});

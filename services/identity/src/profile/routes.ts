import { api, DomainError, mediaPath, messages } from '@castie/contracts';
import { route, type Caller } from '@castie/platform';
import type { FastifyInstance } from 'fastify';
import type { ProfileChanges } from '../account/decider.ts';
import { accountStreamId, loginStreamId, type IdentityContext } from '../context.ts';
import { handleStreamId } from '../login/handle-claim.ts';

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** Editing one's own profile and deleting one's own account. */
export function profileRoutes(app: FastifyInstance, ctx: Pick<IdentityContext, 'accounts' | 'checkResponses' | 'clock' | 'handles' | 'logins'>): void {
  const opts = { checkResponses: ctx.checkResponses };
  const meta = (caller: Caller) => ({ actor: caller.userId, now: ctx.clock.now() });

  route(
    app,
    api.identity.getProfileEdit,
    async ({ caller, params }) => {
      if (!same(params.handle, caller.handle)) throw new DomainError('not_allowed', 'you can only edit your own profile');
      const { state } = await ctx.accounts.load(accountStreamId(caller.userId));
      if (state.status !== 'active') throw new DomainError('authentication_failed', 'this account is not active');
      return { handle: state.handle, firstName: state.firstName, lastName: state.lastName, city: state.city, state: state.state, profPic: state.profPic, backgroundPic: '' };
    },
    opts,
  );

  route(
    app,
    api.identity.editProfile,
    async ({ caller, body, wrote }) => {
      const { profPic, ...fields } = body;
      const changes: ProfileChanges = fields;
      const { state: before } = await ctx.accounts.load(accountStreamId(caller.userId));
      if (before.status !== 'active') throw new DomainError('authentication_failed', 'this account is not active');

      const newHandle = changes.handle !== undefined && changes.handle !== before.handle ? changes.handle : null;
      if (newHandle) await ctx.handles.handle(handleStreamId(newHandle), { type: 'ClaimHandle', userId: caller.userId, handle: newHandle }, meta(caller));
      let edited;
      try {
        edited = await ctx.accounts.handle(accountStreamId(caller.userId), { type: 'EditProfile', changes, profPic: profPic ? mediaPath(profPic.key) : null, now: ctx.clock.now() }, meta(caller));
      } catch (error) {
        if (newHandle && !same(newHandle, before.handle)) await ctx.handles.handle(handleStreamId(newHandle), { type: 'ReleaseHandle', userId: caller.userId }, meta(caller));
        throw error;
      }
      if (newHandle && !same(newHandle, before.handle)) await ctx.handles.handle(handleStreamId(before.handle), { type: 'ReleaseHandle', userId: caller.userId }, meta(caller));
      wrote(edited.positions);

      const updated = edited.events.flatMap((e) => {
        if (e.type === 'ProfileEdited') return Object.keys(e.data).filter((k) => k !== 'userId');
        if (e.type === 'ProfilePictureChanged') return ['profPic'];
        return [];
      });
      if (updated.length === 0) return { message: 'nothing has changed- no data to update' };
      return { message: 'data has been successfully updated', updated_fields: updated };
    },
    opts,
  );

  route(
    app,
    api.identity.deleteAccount,
    async ({ caller, params, wrote }) => {
      if (!same(params.handle, caller.handle)) {
        const { state: claim } = await ctx.handles.load(handleStreamId(params.handle));
        if (claim.status === 'free') throw new DomainError('object_not_found', messages.userNotFound, { handle: params.handle }).withStatus(400);
        throw new DomainError('not_allowed', 'you can only delete your own account');
      }
      const deleted = await ctx.accounts.handle(accountStreamId(caller.userId), { type: 'DeleteAccount' }, meta(caller));
      wrote(deleted.positions);
      // The handle stays reserved; the e-mail is freed and the credentials stop working now.
      await ctx.logins.handle(loginStreamId(caller.email), { type: 'CloseLogin', userId: caller.userId, reason: 'account-deleted' }, meta(caller));
      return { handle_deleted: caller.handle, message: 'Account has been deleted' };
    },
    opts,
  );
}

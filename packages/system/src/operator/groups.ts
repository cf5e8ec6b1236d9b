import { AdminGroupSchema, groupsAdminApi } from '@castie/contracts';
import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { OperatorError } from './admin-client.ts';
import type { Command, CommandContext } from './command.ts';
import { record, table } from './table.ts';


const ICON_TYPES: Record<string, string> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif' };

const enc = encodeURIComponent;

function showGroup(ctx: CommandContext, answer: Record<string, unknown>): void {
  if (ctx.json) return ctx.printJson(answer);
  const g = AdminGroupSchema.parse(answer.group);
  ctx.print(
    record([
      ['slug', g.slug],
      ['name', g.groupName],
      ['info', g.groupInfoText],
      ['icon', g.groupIcon],
      ['requires approval', g.requiresApproval],
      ['access denied message', g.accessDeniedMessage],
      ['creation restricted', g.restrictCreation],
      ['admins', g.admins],
      ['creators', g.creators],
      ['followers', g.followersCount],
      ['casties', g.numberCasties],
    ]),
  );
}

async function iconFile(path: string): Promise<Blob> {
  const type = ICON_TYPES[extname(path).toLowerCase()];
  if (!type) throw new OperatorError(`the icon must be a .png, .jpg, .jpeg or .gif file, not ${basename(path)}`, 2);
  try {
    return new Blob([await readFile(path)], { type });
  } catch (error) {
    throw new OperatorError(`cannot read the icon file ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, 2);
  }
}

const slugArg = { name: 'slug', required: true, description: 'the group slug (lowercase letters, digits and dashes)' };
const handleArg = { name: 'handle', required: true, description: "the person's handle" };

export const groupCommands: Command[] = [
  {
    name: 'groups create',
    summary: 'Create a group, optionally with an icon (uploaded as multipart), approval and restricted creation.',
    args: [slugArg],
    options: {
      name: { type: 'string', value: 'name', description: 'the group name (required)' },
      info: { type: 'string', value: 'text', description: 'short info text' },
      'requires-approval': { type: 'boolean', description: 'following needs approval by an operator or a group admin' },
      'denied-message': { type: 'string', value: 'text', description: 'shown when Follow is pressed on an approval-required group' },
      'restrict-creation': { type: 'boolean', description: 'only named creators may create Casties in it' },
      icon: { type: 'string', value: 'file', description: 'icon image (.png, .jpg, .jpeg, .gif)' },
    },
    examples: ['castie groups create weather --name Weather --info "Rain or shine" --icon ./weather.png', 'castie groups create club --name "The Club" --requires-approval --denied-message "Members only"'],
    async run(ctx) {
      const name = ctx.options.name;
      if (typeof name !== 'string' || name.trim() === '') throw new OperatorError('--name is required: castie groups create <slug> --name <name>', 2);
      const form = new FormData();
      form.set('slug', ctx.args.slug!);
      form.set('groupName', name);
      form.set('groupInfoText', (ctx.options.info as string | undefined) ?? '');
      form.set('requiresApproval', String(ctx.options['requires-approval'] === true));
      form.set('accessDeniedMessage', (ctx.options['denied-message'] as string | undefined) ?? '');
      form.set('restrictCreation', String(ctx.options['restrict-creation'] === true));
      const icon = ctx.options.icon;
      if (typeof icon === 'string') form.set('groupIcon', await iconFile(icon), basename(icon));
      showGroup(ctx, await ctx.client().post('/admin/groups/', form));
    },
  },
  {
    name: 'groups configure',
    summary: "Change an existing group's settings: name, info, icon, approval, denied message, restricted creation.",
    args: [slugArg],
    options: {
      name: { type: 'string', value: 'name', description: 'the new group name' },
      info: { type: 'string', value: 'text', description: 'the new info text' },
      icon: { type: 'string', value: 'file', description: 'a new icon image (.png, .jpg, .jpeg, .gif); the old one is deleted' },
      approval: { type: 'string', value: 'on|off', description: 'following needs approval (off: every pending request is granted)' },
      'denied-message': { type: 'string', value: 'text', description: 'shown when Follow is pressed on an approval-required group' },
      restricted: { type: 'string', value: 'on|off', description: 'only named creators (and admins) may create Casties' },
    },
    examples: ['castie groups configure weather --name "Weather & Climate" --icon ./climate.png', 'castie groups configure club --approval off --restricted on'],
    notes: 'Give at least one option; only what differs from the current settings changes. Followers stay followers when approval is switched on.',
    async run(ctx) {
      const form = new FormData();
      const onOff = (option: 'approval' | 'restricted', field: string) => {
        const value = ctx.options[option];
        if (value === undefined) return;
        if (value !== 'on' && value !== 'off') throw new OperatorError(`--${option} takes on or off, not ${String(value)}`, 2);
        form.set(field, value === 'on' ? 'true' : 'false');
      };
      const textOption = (option: 'name' | 'info' | 'denied-message', field: string) => {
        const value = ctx.options[option];
        if (typeof value === 'string') form.set(field, value);
      };
      textOption('name', 'groupName');
      textOption('info', 'groupInfoText');
      textOption('denied-message', 'accessDeniedMessage');
      onOff('approval', 'requiresApproval');
      onOff('restricted', 'restrictCreation');
      const icon = ctx.options.icon;
      if (typeof icon === 'string') form.set('groupIcon', await iconFile(icon), basename(icon));
      if ([...form.keys()].length === 0) throw new OperatorError('nothing to configure: give at least one of --name, --info, --icon, --approval, --denied-message, --restricted', 2);
      const answer = await ctx.client().post(`/admin/groups/${enc(ctx.args.slug!)}/`, form);
      if (ctx.json) return ctx.printJson(answer);
      showGroup(ctx, answer);
      ctx.print(`\nchanged: ${(answer.updated_fields as string[]).join(', ')}\n`);
      const granted = answer.granted as string[];
      if (granted.length > 0) ctx.print(`granted the pending requests of: ${granted.join(', ')}\n`);
    },
  },
  {
    name: 'groups list',
    summary: 'List every group with its configuration.',
    args: [],
    options: {},
    examples: ['castie groups list'],
    async run(ctx) {
      const answer = await ctx.client().get('/admin/groups/');
      if (ctx.json) return ctx.printJson(answer);
      const rows = groupsAdminApi.listGroups.response.parse(answer).groups.map((g) => ({ ...g, approval: g.requiresApproval, restricted: g.restrictCreation, icon: g.groupIcon ? 'yes' : 'no' }));
      ctx.print(
        table(
          rows,
          [
            { key: 'slug', title: 'slug' },
            { key: 'groupName', title: 'name' },
            { key: 'approval', title: 'approval' },
            { key: 'restricted', title: 'restricted' },
            { key: 'icon', title: 'icon' },
            { key: 'followersCount', title: 'followers' },
            { key: 'numberCasties', title: 'casties' },
            { key: 'admins', title: 'admins' },
            { key: 'creators', title: 'creators' },
          ],
          'no groups yet: create one with castie groups create',
        ),
      );
    },
  },
  {
    name: 'groups show',
    summary: 'Show one group with its configuration, admins and creators.',
    args: [slugArg],
    options: {},
    examples: ['castie groups show weather'],
    async run(ctx) {
      showGroup(ctx, await ctx.client().get(`/admin/groups/${enc(ctx.args.slug!)}/`));
    },
  },
  {
    name: 'groups add-admin',
    summary: "Name a group admin: they see and answer the group's access requests in the app.",
    args: [slugArg, handleArg],
    options: {},
    examples: ['castie groups add-admin club ada'],
    async run(ctx) {
      showGroup(ctx, await ctx.client().post(`/admin/groups/${enc(ctx.args.slug!)}/admins/${enc(ctx.args.handle!)}/`));
    },
  },
  {
    name: 'groups add-creator',
    summary: 'Name a creator: in a group with restricted creation, only they may create Casties.',
    args: [slugArg, handleArg],
    options: {},
    examples: ['castie groups add-creator weather bob'],
    async run(ctx) {
      showGroup(ctx, await ctx.client().post(`/admin/groups/${enc(ctx.args.slug!)}/creators/${enc(ctx.args.handle!)}/`));
    },
  },
];


async function answerRequest(ctx: CommandContext, action: 'grant' | 'deny'): Promise<void> {
  const answer = await ctx.client().post(`/admin/groups/${enc(ctx.args.slug!)}/access/${enc(ctx.args.handle!)}/${action}/`);
  if (ctx.json) return ctx.printJson(answer);
  ctx.print(`${String(answer.message)}\n`);
}

export const requestCommands: Command[] = [
  {
    name: 'requests list',
    summary: 'List pending requests to join approval-required groups, oldest first.',
    args: [],
    options: { group: { type: 'string', short: 'g', value: 'slug', description: 'only the requests of this group (default: every group)' } },
    examples: ['castie requests list', 'castie requests list --group club'],
    async run(ctx) {
      const group = ctx.options.group;
      const answer = await ctx.client().get(`/admin/access-requests/${typeof group === 'string' ? `?group=${enc(group)}` : ''}`);
      if (ctx.json) return ctx.printJson(answer);
      const rows = groupsAdminApi.accessRequests.response.parse(answer).requests.map((r) => ({ ...r, name: `${r.firstName} ${r.lastName}`, requested: `${r.requestedDate} ${r.requestedTime.slice(0, 8)}` }));
      ctx.print(
        table(
          rows,
          [
            { key: 'group_slug', title: 'group' },
            { key: 'handle', title: 'handle' },
            { key: 'name', title: 'name' },
            { key: 'requested', title: 'requested' },
          ],
          typeof group === 'string' ? `no pending requests for ${group}` : 'no pending requests',
        ),
      );
    },
  },
  {
    name: 'requests grant',
    summary: 'Grant a pending request: the person follows the group and sees its Casties.',
    args: [slugArg, handleArg],
    options: {},
    examples: ['castie requests grant club ada'],
    run: (ctx) => answerRequest(ctx, 'grant'),
  },
  {
    name: 'requests deny',
    summary: 'Deny a pending request: it is no longer pending (the person may ask again).',
    args: [slugArg, handleArg],
    options: {},
    examples: ['castie requests deny club mallory'],
    run: (ctx) => answerRequest(ctx, 'deny'),
  },
];

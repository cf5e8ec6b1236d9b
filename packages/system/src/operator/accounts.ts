import { randomInt } from 'node:crypto';
import { OperatorError } from './admin-client.ts';
import type { Command } from './command.ts';
import { record } from './table.ts';

const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';

/** 20 letters and digits (about 116 bits): fits the app's rules (alphanumeric, 4 to 256) and is easy to read out. */
export function generatePassword(length = 20): string {
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}

export const accountCommands: Command[] = [
  {
    name: 'accounts create',
    summary: 'Create a complete account for someone (support), through the same sign-up rules as the app.',
    notes: 'Without --password a password is generated and printed once: pass it on to the person, it cannot be shown again. The e-mail and handle must be unused.',
    args: [],
    options: {
      email: { type: 'string', value: 'address', description: 'e-mail address, also the username (required)' },
      handle: { type: 'string', value: 'handle', description: 'unique handle: letters and digits, at least 3 (required)' },
      'first-name': { type: 'string', value: 'name', description: 'first name: letters and digits (required)' },
      'last-name': { type: 'string', value: 'name', description: 'last name: letters and digits (required)' },
      password: { type: 'string', value: 'password', description: 'the password (default: a generated one, printed once)' },
    },
    examples: ['castie accounts create --email ada@example.com --handle ada --first-name Ada --last-name Lovelace'],
    async run(ctx) {
      const missing = ['email', 'handle', 'first-name', 'last-name'].filter((o) => typeof ctx.options[o] !== 'string' || ctx.options[o] === '');
      if (missing.length > 0) throw new OperatorError(`missing ${missing.map((o) => `--${o}`).join(', ')}: see castie accounts create --help`, 2);
      const given = ctx.options.password;
      const password = typeof given === 'string' ? given : generatePassword();
      const answer = await ctx.client().post('/admin/accounts/', {
        email: ctx.options.email,
        handle: ctx.options.handle,
        first_name: ctx.options['first-name'],
        last_name: ctx.options['last-name'],
        password,
      });
      if (ctx.json) return ctx.printJson(typeof given === 'string' ? answer : { ...answer, password });
      const fields: [string, string][] = [
        ['email', String(answer.email)],
        ['handle', String(answer.handle)],
        ['user id', String(answer.user_uuid)],
      ];
      if (typeof given !== 'string') fields.push(['password', password]);
      ctx.print(record(fields));
      ctx.print(typeof given === 'string' ? `${String(answer.message)}\n` : `${String(answer.message)}. The password is shown this once: pass it on now.\n`);
    },
  },
];

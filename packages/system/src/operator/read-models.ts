import { DeadLetterSchema, readModelServices } from '@castie/contracts';
import { z } from 'zod';
import { OperatorError } from './admin-client.ts';
import type { Command, CommandContext } from './command.ts';
import { table } from './table.ts';

const services = readModelServices.join(', ');

function service(ctx: CommandContext): string {
  const name = ctx.args.service!;
  if (!(readModelServices as readonly string[]).includes(name)) {
    const why = name === 'identity' ? 'identity keeps no read models (it answers from its event streams)' : `unknown service ${name}`;
    throw new OperatorError(`${why}: choose one of ${services}`, 2);
  }
  return name;
}

export const readModelCommands: Command[] = [
  {
    name: 'read-models rebuild',
    summary: "Rebuild a service's read models from the event log, while the system runs.",
    notes:
      'The service drops its read models and applies the whole log again. Meanwhile it answers 503 (service_unavailable, Retry-After) instead of serving half-built answers; the other services go on. The command returns once the rebuilt read models caught up with the log.',
    args: [{ name: 'service', required: true, description: `one of ${services}` }],
    options: {},
    examples: ['castie read-models rebuild casties'],
    async run(ctx) {
      const name = service(ctx);
      if (!ctx.json) ctx.print(`rebuilding the ${name} read models (the ${name} service answers 503 until they caught up)...\n`);
      const answer = await ctx.client().post(`/admin/read-models/${name}/rebuild/`);
      if (ctx.json) return ctx.printJson(answer);
      ctx.print(`${String(answer.message)}\n`);
    },
  },
];

async function lettersOf(ctx: CommandContext, name: string, all: boolean): Promise<Record<string, unknown>> {
  return ctx.client().get(`/admin/read-models/${name}/dead-letters/${all ? '?all=true' : ''}`);
}

export const deadLetterCommands: Command[] = [
  {
    name: 'dead-letters list',
    summary: 'List the events a service could not apply to its read models (pending ones, oldest first).',
    args: [{ name: 'service', required: false, description: `one of ${services} (default: all of them)` }],
    options: { all: { type: 'boolean', short: 'a', description: 'include dead letters already replayed' } },
    examples: ['castie dead-letters list', 'castie dead-letters list casties --all'],
    async run(ctx) {
      const names = ctx.args.service === undefined ? [...readModelServices] : [service(ctx)];
      const all = ctx.options.all === true;
      const answers = [];
      for (const name of names) answers.push({ name, answer: await lettersOf(ctx, name, all) });
      if (ctx.json) return ctx.printJson(names.length === 1 ? answers[0]!.answer : Object.fromEntries(answers.map((a) => [a.name, a.answer])));
      const rows = answers.flatMap(({ name, answer }) =>
        z.array(DeadLetterSchema).parse(answer.dead_letters).map((d) => ({ ...d, service: name, projections: d.projections.length > 0 ? d.projections : ['(contract)'], at: d.deadLetteredAt.slice(0, 19).replace('T', ' ') })),
      );
      ctx.print(
        table(
          rows,
          [
            { key: 'service', title: 'service' },
            { key: 'id', title: 'id' },
            { key: 'eventType', title: 'event' },
            { key: 'projections', title: 'projections' },
            { key: 'status', title: 'status' },
            { key: 'at', title: 'dead-lettered (UTC)' },
            { key: 'reason', title: 'reason' },
          ],
          all ? 'no dead letters' : 'no pending dead letters',
        ),
      );
    },
  },
  {
    name: 'dead-letters replay',
    summary: 'Apply a dead letter again through the projections that failed on it, once its cause is fixed.',
    notes: 'On success it is marked replayed and no longer listed as pending; if it fails again nothing changes and the reason is shown.',
    args: [
      { name: 'service', required: true, description: `one of ${services}` },
      { name: 'id', required: true, description: 'the id shown by dead-letters list (<topic>:<partition>:<offset>)' },
    ],
    options: {},
    examples: ['castie dead-letters replay casties groups:0:17'],
    async run(ctx) {
      const name = service(ctx);
      const answer = await ctx.client().post(`/admin/read-models/${name}/dead-letters/${encodeURIComponent(ctx.args.id!)}/replay/`);
      if (ctx.json) return ctx.printJson(answer);
      ctx.print(`${String(answer.message)}\n`);
    },
  },
];

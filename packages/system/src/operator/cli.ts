/**
 * The operator CLI: `npm run castie -- <command>`. It talks to the admin API over HTTP
 * (`CASTIE_URL`, default http://localhost:8080; token from `ADMIN_TOKEN`), prints aligned tables
 * (or the API's JSON with `--json`) and ends with exit code 0 on success, 1 when the server
 * refused or could not be reached, 2 for a usage or configuration mistake — with one line on
 * stderr, never a stack trace for a person's mistake.
 *
 * Self-contained and importable: `main(argv, io)` runs one command with injected arguments,
 * environment and output (tests, a future compiled bin); run as a script, it uses the process's.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { accountCommands } from './accounts.ts';
import { adminClient, OperatorError, type AdminClient } from './admin-client.ts';
import { helpOf, type Command } from './command.ts';
import { groupCommands, requestCommands } from './groups.ts';
import { deadLetterCommands, readModelCommands } from './read-models.ts';

export const commands: readonly Command[] = [...groupCommands, ...requestCommands, ...accountCommands, ...readModelCommands, ...deadLetterCommands];

export interface OperatorIo {
  env: Record<string, string | undefined>;
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** Tests may pass their own fetch; default the global one. */
  fetch?: typeof fetch;
}

/** Every command, or those of one topic (`castie groups --help`). */
function overview(topic: string | null = null): string {
  const shown = topic ? commands.filter((c) => c.name.startsWith(`${topic} `)) : commands;
  const width = Math.max(...shown.map((c) => c.name.length));
  return [
    'usage: castie <command> [arguments] [options]',
    '',
    'Operator commands against the admin API of a running Castie (CASTIE_URL, default http://localhost:8080;',
    'the bearer token from ADMIN_TOKEN).',
    '',
    'commands:',
    ...shown.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'options of every command: --json (print the API answer as JSON), --url <url> (instead of CASTIE_URL), -h, --help',
    "`castie <command> --help` shows a command's arguments, options and examples.",
    '',
  ].join('\n');
}

/** The command named by the first one or two words of argv, and the rest. */
function findCommand(argv: readonly string[]): { command: Command | null; topic: string | null; rest: string[] } {
  const [first, second, ...rest] = argv;
  const command = commands.find((c) => c.name === `${first} ${second}`);
  if (command) return { command, topic: first!, rest };
  const topic = first && commands.some((c) => c.name.startsWith(`${first} `)) ? first : null;
  return { command: null, topic, rest: argv.slice(topic ? 1 : 0) };
}

/** Runs one operator command; resolves with the process's exit code. */
export async function main(argv: readonly string[], io: OperatorIo): Promise<number> {
  const print = (text: string) => void io.stdout.write(text);
  const fail = (message: string, code: number) => {
    io.stderr.write(`castie: ${message}\n`);
    return code;
  };
  const { command, topic, rest } = findCommand(argv);
  const wantsHelp = argv.includes('--help') || argv.includes('-h');
  if (!command) {
    if (argv.length === 0 || (wantsHelp && (topic !== null || argv[0]?.startsWith('-')))) {
      print(overview(topic));
      return 0;
    }
    if (argv[0] === 'help') {
      print(overview());
      return 0;
    }
    const known = topic ? commands.filter((c) => c.name.startsWith(`${topic} `)).map((c) => c.name) : [];
    const what = topic ? `unknown command "${argv.slice(0, 2).join(' ')}": ${topic} has ${known.join(', ')}` : `unknown command "${argv[0]}"`;
    return fail(`${what} (castie --help lists every command)`, 2);
  }
  if (wantsHelp) {
    print(helpOf(command));
    return 0;
  }

  const config: ParseArgsConfig = {
    args: rest,
    allowPositionals: true,
    strict: true,
    options: {
      ...Object.fromEntries(Object.entries(command.options).map(([name, o]) => [name, { type: o.type, ...(o.short ? { short: o.short } : {}) }])),
      json: { type: 'boolean' },
      url: { type: 'string' },
    },
  };
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    const parsed = parseArgs(config);
    values = parsed.values as Record<string, string | boolean | undefined>;
    positionals = parsed.positionals;
  } catch (error) {
    return fail(`${(error as Error).message.split('\n')[0]} (castie ${command.name} --help)`, 2);
  }
  const required = command.args.filter((a) => a.required);
  if (positionals.length < required.length || positionals.length > command.args.length) {
    const usage = helpOf(command).split('\n')[0]!;
    const missing = required.slice(positionals.length).map((a) => `<${a.name}>`);
    return fail(`${missing.length > 0 ? `missing ${missing.join(' ')}` : `too many arguments (${positionals.slice(command.args.length).join(' ')})`}; ${usage}`, 2);
  }
  const args = Object.fromEntries(command.args.map((a, i) => [a.name, positionals[i]]));

  let client: AdminClient | null = null;
  try {
    await command.run({
      args,
      options: values,
      json: values.json === true,
      client: () => (client ??= adminClient(io.env, { url: values.url as string | undefined, ...(io.fetch ? { fetch: io.fetch } : {}) })),
      print,
      printJson: (value) => print(`${JSON.stringify(value, null, 2)}\n`),
    });
    return 0;
  } catch (error) {
    if (error instanceof OperatorError) return fail(error.message, error.exitCode);
    // A defect of the CLI or an unexpected answer: still one line, with a hint where to look.
    return fail(`unexpected failure: ${(error as Error).message ?? String(error)}`, 1);
  }
}

/** True when this file is the process's entry (tsx or node), not an import. */
function isEntry(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isEntry()) {
  process.exitCode = await main(process.argv.slice(2), { env: process.env, stdout: process.stdout, stderr: process.stderr });
}

import type { AdminClient } from './admin-client.ts';

/** An option of a command, as `util.parseArgs` reads it, with its help text. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  description: string;
  /** Shown in the usage line: `--name <name>`. */
  value?: string;
}

export interface CommandContext {
  /** Positional arguments after the command's name, in the order of `Command.args`. */
  args: Record<string, string | undefined>;
  options: Record<string, string | boolean | undefined>;
  /** The admin API client (created on first use: `--help` needs no token). */
  client(): AdminClient;
  /** `--json`: print what the API answered, for scripts. */
  json: boolean;
  print(text: string): void;
  printJson(value: unknown): void;
}

/** One operator command, e.g. `groups create`. */
export interface Command {
  name: string;
  summary: string;
  /** Positional arguments: `<slug>` required, `[service]` optional. */
  args: readonly { name: string; required: boolean; description: string }[];
  options: Readonly<Record<string, OptionSpec>>;
  examples: readonly string[];
  /** More to say in `--help` (a sentence or two). */
  notes?: string;
  run(ctx: CommandContext): Promise<void>;
}

/** `castie <name> <args> [options]` and every option with its description. */
export function helpOf(command: Command): string {
  const args = command.args.map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`)).join(' ');
  const lines = [`usage: castie ${command.name}${args ? ` ${args}` : ''}${Object.keys(command.options).length > 0 ? ' [options]' : ''}`, '', command.summary];
  if (command.notes) lines.push('', command.notes);
  if (command.args.length > 0) {
    lines.push('', 'arguments:');
    const width = Math.max(...command.args.map((a) => a.name.length));
    for (const a of command.args) lines.push(`  ${a.name.padEnd(width)}  ${a.description}`);
  }
  const options: [string, string][] = Object.entries(command.options).map(([name, o]) => [`${o.short ? `-${o.short}, ` : ''}--${name}${o.type === 'string' ? ` <${o.value ?? 'value'}>` : ''}`, o.description]);
  options.push(['--json', 'print the API answer as JSON (for scripts)'], ['-h, --help', 'show this help']);
  const width = Math.max(...options.map(([flag]) => flag.length));
  lines.push('', 'options:', ...options.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`));
  if (command.examples.length > 0) lines.push('', 'examples:', ...command.examples.map((e) => `  ${e}`));
  return lines.join('\n') + '\n';
}

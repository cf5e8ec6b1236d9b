import closeWithGrace from 'close-with-grace';
import { z } from 'zod';

/** A person's mistake in the environment: reported as one line, never as a stack trace. */
export class ConfigurationError extends Error {}

/** The exit code of a configuration error (EX_CONFIG of sysexits.h), so supervisors can tell it apart. */
export const EXIT_CONFIG = 78;

/** An IANA time zone the runtime's Intl knows: `Mars/Olympus` fails at start, not at the first login. */
export const timeZoneName = z
  .string()
  .default('UTC')
  .refine(
    (name) => {
      try {
        new Intl.DateTimeFormat('en', { timeZone: name });
        return true;
      } catch {
        return false;
      }
    },
    { error: (issue) => `${String(issue.input)} is not a time zone this runtime knows (use an IANA name such as Europe/Berlin)` },
  );

/** How long a stop may take: in-flight requests drain and stores flush within it, else the process exits 1. */
export const shutdownGraceMs = z.coerce.number().int().min(100).max(600_000).default(10_000);

/** Every problem of a parsed environment, one `NAME: problem` each, joined into one line. */
export function problemsOf(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issue.path.join('.') || 'environment'}: ${issue.message}`);
}

/** The signals that stop a process gracefully (a supervisor's SIGTERM, a terminal's Ctrl-C). */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;
/** The same stop signal again within this time is a duplicate delivery (npm forwarding), not a second request. */
const REPEATED_SIGNAL_MS = 1000;

interface Logger {
  info(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface ProcessPlan<T, L extends Logger> {
  /** Reads and checks the configuration; throws ConfigurationError on a person's mistake. */
  configure(): T;
  /** Starts and listens; the returned close drains requests and flushes every store. */
  start(config: T, logger: L): Promise<{ close(): Promise<void> }>;
  logger(config: T): L;
  graceMs(config: T): number;
  /** `PORT` of the config, to name it when it is taken. */
  port(config: T): number;
}

/**
 * Runs one Castie process: configuration errors and a taken port end it with one line on stderr;
 * SIGTERM or SIGINT (or an uncaught error) closes it within the grace period: the server stops
 * accepting, in-flight requests finish, then the read models, the log and the other stores close.
 * A signal during start-up ends the process at once: read models resume from their last committed
 * checkpoint, exactly as after a crash. A second stop signal ends it at once too, unless it is the
 * same signal delivered again within a second (Ctrl-C under npm reaches the server twice).
 */
export async function runProcess<T, L extends Logger>(plan: ProcessPlan<T, L>): Promise<void> {
  let config: T;
  try {
    config = plan.configure();
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    process.stderr.write(`castie: ${error.message}\n`);
    process.exit(EXIT_CONFIG);
  }
  const logger = plan.logger(config);
  let running: { close(): Promise<void> } | null = null;
  let stopping: { signal: NodeJS.Signals; at: number } | null = null;
  const grace = closeWithGrace(
    {
      delay: plan.graceMs(config),
      logger: { error: (message: unknown) => logger.error({ message }, 'stopping') },
      // SIGINT and SIGTERM are ours (below): close-with-grace ends the process on any second one.
      skip: [...STOP_SIGNALS],
    },
    async ({ err, signal }) => {
      if (err) logger.error({ err }, 'closing after an error');
      else logger.info({ signal: signal ?? stopping?.signal }, running ? 'closing: draining requests, then flushing stores' : 'stopped during start-up');
      await running?.close();
      if (running) logger.info({}, 'closed');
    },
  );
  for (const signal of STOP_SIGNALS) {
    process.on(signal, () => {
      if (!stopping) {
        stopping = { signal, at: Date.now() };
        void grace.close();
        return;
      }
      // Ctrl-C signals the whole foreground job, and npm forwards the SIGINT it got to its child
      // as well: the same signal again at once is that one stop, not a person insisting.
      if (signal === stopping.signal && Date.now() - stopping.at < REPEATED_SIGNAL_MS) return;
      logger.error({ signal }, `second ${signal}: exiting without waiting for the drain`);
      process.exit(1);
    });
  }
  try {
    running = await plan.start(config, logger);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') failStart(`port ${plan.port(config)} is in use: stop what holds it or set PORT`);
    if (code === 'EACCES' || code === 'EROFS') failStart(`cannot write where it must: ${(error as Error).message}`);
    throw error;
  }
}

function failStart(message: string): never {
  process.stderr.write(`castie: ${message}\n`);
  process.exit(1);
}

import type { ExportedCastie, ExportedComment, ExportedForecast, FrodadRequestsAnswer, Notification, OwnDataExport, ServiceName } from '@castie/contracts';
import { RateLimited, type Cache } from '@castie/platform';
import archiver from 'archiver';
import { Readable } from 'node:stream';

/*
 * The own-data export (`GET /api/export/`), and why it is built this way.
 *
 * A person's data lives in five services, and each answers only from its own read models (rule 2),
 * so the gateway assembles the document, as it assembles nothing else: it only concatenates what
 * the services answer for the caller, in a fixed order, and holds no rule of its own.
 *
 * - Small sections (profile, preferences, groups, frodads and requests) are read first, through
 *   the public endpoints that show them to the caller in the app. A failure there still answers a
 *   proper error envelope, because nothing has been sent yet.
 * - Large sections (notifications, Casties created, forecasts, comments) are paged from internal
 *   routes `/internal/export/<section>/?after=<cursor>&limit=<n>` (notifications from the
 *   notifications service, read without marking them read; the rest from the casties service).
 *   Notifications are every one of the person's, not the newest 100 the app lists: the first page
 *   leads with those worked out on reading (computed once), then the stored ones are paged from
 *   their (userId, createdAt, _id) index, newest first. Each page is a small
 *   ordinary request (`{ items, next }`, from an index that starts with the owner), so the service
 *   client keeps returning whole Buffers, the cluster needs no streaming client, and each page is
 *   written to the answer before the next one is asked for. The answer is a Node stream pulled by
 *   the socket: a slow client slows the paging (back-pressure), and memory holds about one page
 *   (500 items; the streams read at most one piece ahead), whatever the history's length. A failure after the first byte can no longer change the
 *   status: the answer is cut off (the JSON does not parse, the zip has no central directory),
 *   which a client cannot mistake for a complete export.
 * - One export at a time per person (ExportSlots, in the cache port: across gateways in the
 *   cluster); the request itself counts against the person's request budget like any other.
 */

/** One service's JSON answer for the caller; a refusal is thrown as ServiceAnswered. */
export interface ExportSource {
  get(service: ServiceName, url: string): Promise<Record<string, unknown>>;
}

/** A service refused (status ≥ 400): its envelope goes to the client as it is. */
export class ServiceAnswered extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: Buffer | string,
    readonly contentType: string,
    readonly retryAfter: string | undefined,
  ) {
    super(`service answered ${statusCode}`);
    this.name = 'ServiceAnswered';
  }
}

/** Items per internal page: small enough to keep memory flat, large enough to keep requests few. */
export const EXPORT_PAGE_SIZE = 500;

type SmallSections = Pick<OwnDataExport, 'profile' | 'preferences' | 'groups' | 'frodads' | 'frodad_requests'>;

/** The sections that are small by nature, each from what the app shows the caller. */
export async function readSmallSections(source: ExportSource, handle: string): Promise<SmallSections> {
  const h = encodeURIComponent(handle);
  const [profile, email, preferences, groups, frodads, requests] = await Promise.all([
    source.get('identity', `/api/profile/${h}/edit/`),
    source.get('identity', '/api/preferences/edit/email/'),
    source.get('identity', '/api/preferences/'),
    source.get('groups', '/api/groups/'),
    source.get('social', `/api/profile/${h}/frodads/`),
    source.get('social', '/api/frodad-requests/'),
  ]);
  const { status: _p, ...profileFields } = profile;
  const allGroups = groups.groups as SmallSections['groups'];
  const received = requests as unknown as FrodadRequestsAnswer;
  return {
    profile: { ...(profileFields as Omit<SmallSections['profile'], 'email' | 'profileInfo'>), email: String(email.email), profileInfo: frodads.profileInfo as SmallSections['profile']['profileInfo'] },
    preferences: { is_private: preferences.is_private === true },
    // Followed, or access requested and pending: the groups that are the person's.
    groups: Object.fromEntries(Object.entries(allGroups).filter(([, g]) => g.following || g.access === 'pending')),
    frodads: (typeof frodads.myFrodads === 'object' ? frodads.myFrodads : {}) as SmallSections['frodads'],
    frodad_requests: { requests_received: received.requests_received ?? [], requests_sent: received.requests_sent ?? [] },
  };
}

export type PagedSection = 'notifications' | 'casties' | 'forecasts' | 'comments';
interface SectionItem {
  notifications: Notification;
  casties: ExportedCastie;
  forecasts: ExportedForecast;
  comments: ExportedComment;
}

/** The pages of one large section, fetched one at a time as the consumer asks for them. */
export async function* sectionPages<S extends PagedSection>(source: ExportSource, section: S, onPage: () => Promise<void> = async () => {}): AsyncGenerator<SectionItem[S][]> {
  let after: string | null = null;
  do {
    const page: Record<string, unknown> = await source.get(section === 'notifications' ? 'notifications' : 'casties', `/internal/export/${section}/?limit=${EXPORT_PAGE_SIZE}${after === null ? '' : `&after=${encodeURIComponent(after)}`}`);
    after = typeof page.next === 'string' ? page.next : null;
    await onPage();
    yield page.items as SectionItem[S][];
  } while (after !== null);
}

/** The JSON document, as text pieces: the small sections at once, then each large one page by page. */
export async function* jsonDocument(small: SmallSections, source: ExportSource, exportedAt: Date, onPage?: () => Promise<void>): AsyncGenerator<string> {
  const head: Omit<OwnDataExport, PagedSection> = { status: 200, exported_at: exportedAt.toISOString(), ...small };
  const text = JSON.stringify(head);
  yield text.slice(0, -1);
  for (const section of ['notifications', 'casties', 'forecasts', 'comments'] as const) {
    yield `,${JSON.stringify(section)}:[`;
    let first = true;
    for await (const items of sectionPages(source, section, onPage)) {
      if (items.length === 0) continue;
      yield `${first ? '' : ','}${items.map((item) => JSON.stringify(item)).join(',')}`;
      first = false;
    }
    yield ']';
  }
  yield '}';
}

/**
 * One CSV cell (RFC 4180): text is always quoted, inner quotes doubled. Text that a spreadsheet
 * would run as a formula (starting with = + - @, or a tab or carriage return that some programs
 * skip before one) gets a leading apostrophe, as OWASP advises against CSV injection: the cell
 * then shows the text as written, with the apostrophe, instead of computing it. Numbers and
 * booleans are written bare; null is an empty cell.
 */
export function csvCell(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return `"${safe.replace(/"/g, '""')}"`;
}

export const csvRow = (cells: readonly (string | number | boolean | null | undefined)[]): string => `${cells.map(csvCell).join(',')}\r\n`;

const csvColumns = {
  forecasts: ['forecast_id', 'uuid', 'group', 'question', 'forecast', 'answer_id', 'placed_at', 'is_active', 'endDate', 'endTime', 'answerSubmitted', 'is_correct', 'points_earned'],
  casties: ['uuid', 'group', 'question', 'answer_options', 'created_at', 'endDate', 'endTime', 'forecasts', 'answered', 'correct_answer_id', 'correct_text'],
  comments: ['uuid', 'castie', 'question', 'text', 'posted_at'],
} as const satisfies Record<Exclude<PagedSection, 'notifications'>, readonly string[]>;

async function* csvOf<S extends keyof typeof csvColumns>(source: ExportSource, section: S, onPage?: () => Promise<void>): AsyncGenerator<string> {
  const columns = csvColumns[section] as readonly string[];
  yield csvRow(columns);
  for await (const items of sectionPages(source, section, onPage)) {
    const rows = items.map((item) => {
      const record = item as unknown as Record<string, unknown>;
      return csvRow(
        columns.map((c) => {
          const value = record[c];
          // Answer options in one cell, "1: Yes | 2: No".
          if (Array.isArray(value)) return value.map((o: { answer_id: number; text: string }) => `${o.answer_id}: ${o.text}`).join(' | ');
          return value as string | number | boolean | null;
        }),
      );
    });
    yield rows.join('');
  }
}

/**
 * The zip of CSV files (`format=csv`): forecasts.csv, casties.csv and comments.csv, UTF-8 with a
 * header row, each streamed into the archive page by page (archiver reads one entry at a time).
 */
export function csvZip(source: ExportSource, onPage?: () => Promise<void>): archiver.Archiver {
  const zip = archiver('zip', { zlib: { level: 6 } });
  for (const section of ['forecasts', 'casties', 'comments'] as const) zip.append(Readable.from(csvOf(source, section, onPage), { highWaterMark: 1 }), { name: `${section}.csv` });
  void zip.finalize().catch((error: unknown) => zip.destroy(error as Error));
  return zip;
}

/**
 * One export at a time per person, across gateways (the cache port; Redis in the cluster). The
 * slot expires by itself if a gateway dies mid-export, and is refreshed at every page meanwhile.
 */
export class ExportSlots {
  constructor(
    private readonly cache: Cache,
    private readonly ttlMs = 5 * 60_000,
  ) {}

  private key = (userId: string) => `export:user:${userId}`;

  /** Takes the person's slot, or refuses with 429 while another export of theirs runs. */
  async take(userId: string): Promise<void> {
    const count = await this.cache.increment(this.key(userId), this.ttlMs);
    if (count > 1) throw new RateLimited('an export of your data is already running: wait until it ends', 10);
  }

  async refresh(userId: string): Promise<void> {
    await this.cache.set(this.key(userId), '1', this.ttlMs);
  }

  async release(userId: string): Promise<void> {
    await this.cache.del(this.key(userId));
  }
}

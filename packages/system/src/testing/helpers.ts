import type { EventEnvelope } from '@castie/contracts';
import type { TestSystem } from './harness.ts';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

let groupCounter = 0;

/** Test helper: a fresh group created through the operators' API; returns its slug. */
export async function createGroup(sys: TestSystem, fields: Record<string, unknown> = {}): Promise<string> {
  groupCounter += 1;
  const slug = (fields.slug as string | undefined) ?? `g${groupCounter}-${Math.random().toString(36).slice(2, 7)}`;
  const res = await sys.admin('POST', '/admin/groups/', { slug, groupName: `Group ${slug}`, groupInfoText: 'info', requiresApproval: false, accessDeniedMessage: 'ask the admins', ...fields });
  if (res.status !== 200) throw new Error(`group creation failed: ${res.text}`);
  return slug;
}

/**
 * Test helper: the envelopes of one topic as the embedded log holds them on disk (`<topic>.log`).
 * Values are JSON between binary frame headers, so each envelope is cut out by matching braces.
 */
export async function loggedEvents(sys: TestSystem, topic: string): Promise<EventEnvelope[]> {
  const text = await readFile(join(sys.dataDir, 'log', `${topic}.log`), 'latin1');
  const out: EventEnvelope[] = [];
  let from = text.indexOf('{"id":');
  while (from >= 0) {
    let depth = 0;
    let inString = false;
    let end = -1;
    for (let i = from; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{') depth++;
      else if (c === '}' && --depth === 0) {
        end = i;
        break;
      }
    }
    if (end < 0) break;
    out.push(JSON.parse(Buffer.from(text.slice(from, end + 1), 'latin1').toString('utf8')) as EventEnvelope);
    from = text.indexOf('{"id":', end);
  }
  return out;
}

// PNG and multipart() live in the whole-system harness, shared by every service's tests.
export { multipart, PNG } from './harness.ts';

/** Makes two users frodads through the social service (request, then accept). */
export async function befriend(sys: TestSystem, a: { handle: string; email: string; password: string }, b: { handle: string; email: string; password: string }): Promise<void> {
  const sent = await sys.post(`/api/add-frodad/${b.handle}/`, {}, a);
  const accepted = await sys.post(`/api/frodad-requests/${a.handle}/accept/`, {}, b);
  if (sent.status !== 200 || accepted.status !== 200) throw new Error(`befriending failed: ${sent.text} ${accepted.text}`);
}

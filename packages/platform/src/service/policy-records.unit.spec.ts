import { defineEventCatalog } from '@castie/contracts';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { LogRecord } from '../ports/event-log.ts';
import { policyEventOf } from './policy-records.ts';

const catalog = defineEventCatalog('tallies', { Counted: z.object({ n: z.number().int() }) });
const record = (value: string): LogRecord => ({ topic: 'tallies', partition: 0, offset: 0, key: 'tally-1', value, timestamp: 0 });
const envelope = (type: string, data: unknown) => JSON.stringify({ id: 'a'.repeat(32), type, schemaVersion: 1, streamId: 'tally-1', streamVersion: 1, occurredAt: '2026-03-01T12:00:00.000Z', actor: 'test', data });

describe('a policy reads a record', () => {
  it('as its event', () => expect(policyEventOf(catalog, record(envelope('Counted', { n: 3 })))).toEqual({ type: 'Counted', data: { n: 3 } }));
  it('as none when it is not JSON, not an envelope, of an unknown type, or breaks its contract', () => {
    for (const value of ['not json {', JSON.stringify({ hello: 'world' }), envelope('Unknown', { n: 3 }), envelope('Counted', { n: 'three' })]) expect(policyEventOf(catalog, record(value))).toBeNull();
  });
});

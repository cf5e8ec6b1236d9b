import { describe, expect, it } from 'vitest';
import { ManualClock } from '../ports/clock.ts';
import { isKeptAnswer, RepeatedAnswers } from './repeated-answers.ts';

const bytes = (text: string) => Buffer.from(text, 'utf8');
const text = (bytes: Buffer | undefined) => bytes?.toString('utf8');

/** Answers over a store whose version the test moves, on a frozen clock. */
function answers(options: { maxBytes?: number } = {}) {
  const store = { version: 1 as number | null };
  const clock = new ManualClock(new Date('2026-03-01T12:00:00Z'));
  return { store, clock, kept: new RepeatedAnswers({ version: () => store.version, clock, ...options }) };
}

describe('RepeatedAnswers', () => {
  it('gives the same caller and URL the answer it got until the store commits again', () => {
    const { store, kept } = answers();
    const version = kept.begin()!;
    kept.keep('ann /api/home/', version, bytes('{"status":200,"n":1}'), Infinity);
    expect(text(kept.find('ann /api/home/'))).toBe('{"status":200,"n":1}');
    expect(kept.find('bob /api/home/')).toBeUndefined();
    expect(kept.find('ann /api/home/new/')).toBeUndefined();
    store.version = 2;
    expect(kept.find('ann /api/home/')).toBeUndefined();
    // Not even once the version comes back (a store opened again counts from its start).
    store.version = 1;
    expect(kept.find('ann /api/home/')).toBeUndefined();
  });

  it('keeps nothing made across a commit: it may mix two versions', () => {
    const { store, kept } = answers();
    const version = kept.begin()!;
    store.version = 2;
    kept.keep('ann /api/home/', version, bytes('{"status":200}'), Infinity);
    expect(kept.find('ann /api/home/')).toBeUndefined();
  });

  it('keeps nothing where the store cannot tell its version', () => {
    const { store, kept } = answers();
    store.version = null;
    expect(kept.begin()).toBeNull();
  });

  it('makes the answer anew once time changed it, and when the clock is set back before it was made', () => {
    const { clock, kept } = answers();
    const ends = clock.now().getTime() + 60_000;
    kept.keep('ann /api/home/', kept.begin()!, bytes('{"status":200,"is_answerable":false}'), ends);
    clock.advance(59);
    expect(text(kept.find('ann /api/home/'))).toBe('{"status":200,"is_answerable":false}');
    clock.advance(1);
    expect(kept.find('ann /api/home/')).toBeUndefined();

    kept.keep('ann /api/home/', kept.begin()!, bytes('{"status":200,"is_answerable":true}'), Infinity);
    clock.advance(-1);
    expect(kept.find('ann /api/home/')).toBeUndefined();
    // An end already passed when the answer was kept: nothing to keep.
    kept.keep('ann /api/home/', kept.begin()!, bytes('{"status":200}'), clock.now().getTime());
    expect(kept.find('ann /api/home/')).toBeUndefined();
  });

  it('keeps nothing made while the clock was set back', () => {
    const { clock, kept } = answers();
    const making = kept.begin()!;
    clock.advance(-1);
    kept.keep('ann /api/home/', making, bytes('{"status":200}'), Infinity);
    expect(kept.find('ann /api/home/')).toBeUndefined();
  });

  it('gives the bytes it keeps, in memory of their own, and knows them as kept', () => {
    const { kept } = answers();
    // A small answer is a slice of Node's shared pool: keeping the slice kept the whole slab.
    const small = bytes('{"status":200,"following":false}');
    expect(small.buffer.byteLength).toBeGreaterThan(small.length);
    const sent = kept.keep('ann /api/home/', kept.begin()!, small, Infinity);
    expect(text(sent)).toBe(text(small));
    expect(sent.buffer.byteLength).toBe(sent.length);
    expect(kept.find('ann /api/home/')).toBe(sent);
    expect(isKeptAnswer(sent)).toBe(true);
    expect(isKeptAnswer(small)).toBe(false);
    // An answer it does not keep is given back as it came, and not known as kept.
    const stale = bytes('{"status":200}');
    const making = kept.begin()!;
    expect(kept.keep('bob /api/home/', { ...making, version: making.version - 1 }, stale, Infinity)).toBe(stale);
    expect(isKeptAnswer(stale)).toBe(false);
  });

  it('holds at most its budget, the least recently asked answers going first', () => {
    const { kept } = answers({ maxBytes: 64 * 1024 });
    const page = (n: number) => `{"status":200,"page":${n},"pad":"${'x'.repeat(8000)}"}`;
    for (let n = 0; n < 3; n++) kept.keep(`ann ${n}`, kept.begin()!, bytes(page(n)), Infinity);
    for (let n = 3; n < 100; n++) {
      expect(text(kept.find('ann 0'))).toBe(page(0));
      kept.keep(`ann ${n}`, kept.begin()!, bytes(page(n)), Infinity);
    }
    expect(kept.size).toBeLessThanOrEqual(8);
    expect(text(kept.find('ann 0'))).toBe(page(0));
    expect(kept.find('ann 1')).toBeUndefined();
    expect(text(kept.find('ann 99'))).toBe(page(99));
  });
});

import { describe, expect, it } from 'vitest';
import { readEmbeddedConfig } from './config.ts';

describe('the embedded profile reads REBUILD_HELD_DOCUMENTS', () => {
  it('leaves the count to the memory the process may use unless given one, and takes a count', () => {
    expect(readEmbeddedConfig({}).REBUILD_HELD_DOCUMENTS).toBeUndefined();
    expect(readEmbeddedConfig({ REBUILD_HELD_DOCUMENTS: '15000' }).REBUILD_HELD_DOCUMENTS).toBe(15_000);
  });

  it('refuses what is not a count between 1 and 10,000,000, naming the variable', () => {
    for (const bad of ['0', '-5', '1.5', 'many', '10000001']) expect(() => readEmbeddedConfig({ REBUILD_HELD_DOCUMENTS: bad }), bad).toThrow(/REBUILD_HELD_DOCUMENTS/);
  });
});

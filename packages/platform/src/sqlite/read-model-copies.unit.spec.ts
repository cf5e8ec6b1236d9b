import { describe, expect, it } from 'vitest';
import { fileToStartFrom, type CopySource, type FinishedProjection } from './read-model-copies.ts';

const projection = (name: string, version = 1): FinishedProjection => ({ name, version, collections: JSON.stringify([{ name: `${name}_docs` }]) });
const source = (group: string, ...projections: FinishedProjection[]): CopySource => ({ group, path: `/files/${group}.db`, projections });

describe('the finished file a new read-model file starts as', () => {
  const ours = [projection('people'), projection('friendships'), projection('notifications')];

  it('is the one holding the most of its projections, then the one holding the fewest others', () => {
    const sources = [
      source('casties-read', projection('people'), projection('friendships'), projection('groups'), projection('castie-views')),
      source('groups-read', projection('people'), projection('friendships'), projection('groups')),
      source('social-read', projection('people')),
    ];
    const start = fileToStartFrom(sources, ours);
    expect(start?.source.group).toBe('groups-read');
    expect(start?.extra.map((p) => p.name)).toEqual(['groups']);
  });

  it('is never one holding a projection of its own in another version, or built with other collections', () => {
    const otherVersion = source('groups-read', projection('people', 2), projection('friendships'));
    const otherCollections = source('social-read', { ...projection('people'), collections: '[]' }, projection('friendships'));
    const fitting = source('casties-read', projection('people'), projection('castie-views'));
    expect(fileToStartFrom([otherVersion, otherCollections, fitting], ours)?.source.group).toBe('casties-read');
    expect(fileToStartFrom([otherVersion, otherCollections], ours)).toBeNull();
  });

  it('is none when no file holds any of its projections', () => {
    expect(fileToStartFrom([source('casties-read', projection('castie-views'))], ours)).toBeNull();
    expect(fileToStartFrom([], ours)).toBeNull();
  });
});

import { describe, expect, it } from 'vitest';
import { Metrics, statusClass } from './metrics.ts';

const lines = async (metrics: Metrics, name: string) => (await metrics.text()).split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));

describe('Metrics', () => {
  it('given read models, when scraped, then each projection\'s lag is a gauge sample labelled with its service', async () => {
    const metrics = new Metrics({ processMetrics: false, readModelLag: async () => [{ service: 'groups', group: 'groups-read', projection: 'people', lagEvents: 7 }] });
    expect(await lines(metrics, 'castie_projection_lag_events')).toEqual(['castie_projection_lag_events{service="groups",group="groups-read",projection="people"} 7']);
  });

  it('given a lag that cannot be read, when scraped, then the scrape still answers, without lag samples', async () => {
    const metrics = new Metrics({ processMetrics: false, readModelLag: () => Promise.reject(new Error('broker down')) });
    const text = await metrics.text();
    expect(text).toContain('# TYPE castie_projection_lag_events gauge');
    expect(await lines(metrics, 'castie_projection_lag_events')).toEqual([]);
  });

  it('counts per service: dead letters per group, credential cache and repeated answers hits and misses', async () => {
    const metrics = new Metrics({ processMetrics: false });
    const identity = metrics.forService('identity');
    identity.credentialCacheLookup(true);
    identity.credentialCacheLookup(true);
    identity.credentialCacheLookup(false);
    const casties = metrics.forService('casties');
    casties.repeatedAnswerLookup(false);
    casties.repeatedAnswerLookup(true);
    casties.repeatedAnswerLookup(true);
    casties.repeatedAnswerLookup(true);
    expect(await lines(metrics, 'castie_repeated_answers_hits_total')).toEqual(['castie_repeated_answers_hits_total{service="casties"} 3']);
    expect(await lines(metrics, 'castie_repeated_answers_misses_total')).toEqual(['castie_repeated_answers_misses_total{service="casties"} 1']);
    metrics.forService('social').deadLettered('social-read');
    expect(await lines(metrics, 'castie_credential_cache_hits_total')).toEqual(['castie_credential_cache_hits_total{service="identity"} 2']);
    expect(await lines(metrics, 'castie_credential_cache_misses_total')).toEqual(['castie_credential_cache_misses_total{service="identity"} 1']);
    expect(await lines(metrics, 'castie_dead_letters_total')).toEqual(['castie_dead_letters_total{service="social",group="social-read"} 1']);
    // Counted between scrapes, through any of the service's handles: each counted once.
    identity.credentialCacheLookup(true);
    metrics.forService('identity').credentialCacheLookup(true);
    expect(await lines(metrics, 'castie_credential_cache_hits_total')).toEqual(['castie_credential_cache_hits_total{service="identity"} 4']);
    expect(await lines(metrics, 'castie_credential_cache_hits_total')).toEqual(['castie_credential_cache_hits_total{service="identity"} 4']);
  });

  it('counts checkpoint failures per database file, and the thread stopping as `thread`', async () => {
    const metrics = new Metrics({ processMetrics: false });
    metrics.checkpointFailed('casties.db');
    metrics.checkpointFailed('casties.db');
    metrics.checkpointFailed('thread');
    expect(await lines(metrics, 'castie_sqlite_checkpoint_failures_total')).toEqual([
      'castie_sqlite_checkpoint_failures_total{file="casties.db"} 2',
      'castie_sqlite_checkpoint_failures_total{file="thread"} 1',
    ]);
  });

  it('labels requests by route pattern and status class; a request no route matched is `unmatched`', async () => {
    const metrics = new Metrics({ processMetrics: false });
    metrics.observeRequest({ service: 'gateway', method: 'GET', route: undefined, statusCode: 404 }, 0.001);
    expect(await lines(metrics, 'castie_http_request_duration_seconds_count')).toEqual(['castie_http_request_duration_seconds_count{service="gateway",method="GET",route="unmatched",status_class="4xx"} 1']);
    expect([200, 301, 404, 503].map(statusClass)).toEqual(['2xx', '3xx', '4xx', '5xx']);
  });
});

import type { Cache } from '@castie/platform';
import { createLocalMediaStore } from '@castie/platform/embedded/local-media-store';
import type { FastifyInstance } from 'fastify';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildGatewayApp, type GatewayDeps } from '../app.ts';
import { inProcessClient } from '../routing/service-client.ts';

/** A gateway in front of one service, identity (a Fastify app that fakes it), and how to end both. */
export interface GatewayOverIdentity {
  gateway: FastifyInstance;
  /** Where its media go (a second gateway in front of the same identity may share it). */
  mediaDir: string;
  /** Closes the gateway and identity and removes the media directory (the cache is the caller's). */
  close(): Promise<void>;
}

/**
 * Starts a gateway whose only service is `identity`, on `cache`, with media in a directory of its
 * own: for gateway tests that fake what identity answers. `options` adds to or overrides the
 * gateway's dependencies (abuse limits, a trusted proxy).
 */
export async function gatewayOverIdentity(identity: FastifyInstance, cache: Cache, options: Partial<GatewayDeps> = {}): Promise<GatewayOverIdentity> {
  // Before identity is ready: the in-process client adds a hook to it.
  const client = inProcessClient(identity);
  await identity.ready();
  const mediaDir = await mkdtemp(join(tmpdir(), 'castie-gateway-'));
  const gateway = await buildGatewayApp({ services: { identity: client }, media: createLocalMediaStore({ dir: mediaDir }), cache, adminToken: 'gateway-test-admin-token-0123456789', ...options });
  await gateway.ready();
  return {
    gateway,
    mediaDir,
    async close() {
      await gateway.close();
      await identity.close();
      await rm(mediaDir, { recursive: true, force: true });
    },
  };
}

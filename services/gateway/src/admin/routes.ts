import type { ServiceName } from '@castie/contracts';
import { errorBody, type ManualClock } from '@castie/platform';
import type { FastifyInstance } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { ServiceClient } from '../routing/service-client.ts';

const ClockBody = z.object({ advance_seconds: z.coerce.number().finite().positive() });

const sameSecret = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * The operators' API under /admin/, behind `Authorization: Bearer <ADMIN_TOKEN>`. Group
 * administration is answered by the groups service; the clock route exists only with CLOCK=manual.
 */
export function adminRoutes(app: FastifyInstance, options: { token: string; manualClock: ManualClock | null; services: Partial<Record<ServiceName, ServiceClient>> }): void {
  app.register(async (admin) => {
    admin.addHook('onRequest', async (request, reply) => {
      const bearer = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? '')?.[1]?.trim();
      if (!bearer || !sameSecret(bearer, options.token)) return reply.code(401).send(errorBody('authorization_failed', 'the admin API needs Authorization: Bearer <ADMIN_TOKEN>'));
    });

    if (options.manualClock) {
      const clock = options.manualClock;
      admin.post('/admin/clock/', async (request, reply) => {
        const body = ClockBody.safeParse(request.body ?? {});
        if (!body.success) return reply.code(400).send(errorBody('missing_request_data', 'advance_seconds must be a positive number of seconds'));
        const now = clock.advance(body.data.advance_seconds);
        return { status: 200, now: now.toISOString() };
      });
    }

    const groups = options.services.groups;
    if (groups) {
      admin.all('/admin/groups/*', async (request, reply) => {
        const res = await groups.request({ method: request.method, url: request.url, headers: { 'x-castie-admin': 'true' }, ...(request.method === 'GET' ? {} : { body: request.body ?? {} }) });
        reply.code(res.statusCode).header('content-type', res.headers['content-type'] ?? 'application/json');
        return reply.send(res.body);
      });
    }
  });
}

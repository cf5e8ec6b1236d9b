import { AdminClockBodySchema as ClockBody, groupsAdminApi, internalHeaders, MAX_CLOCK_ADVANCE_SECONDS as MAX_ADVANCE_SECONDS, isReadModelService, readModelServices, type ServiceName } from '@castie/contracts';
import { errorBody, type ManualClock, type MediaStore } from '@castie/platform';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import type { ServiceClient } from '../routing/service-client.ts';
import { readMultipart, withoutClientUploadRefs } from '../uploads/multipart.ts';


/** Fields of the admin API that carry files (the group icon): checked by their bytes and stored like profile pictures. */
const adminUploads: readonly string[] = [...new Set(Object.values(groupsAdminApi).flatMap((e) => e.uploads ?? []))];

const plainObject = (body: unknown): Record<string, unknown> => (body && typeof body === 'object' && !Array.isArray(body) ? { ...(body as Record<string, unknown>) } : {});

const sameSecret = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * The operators' API under /admin/, behind `Authorization: Bearer <ADMIN_TOKEN>`, forwarded with
 * `x-castie-admin: true` to the service that owns it: groups and access requests to groups,
 * accounts to identity, `/admin/read-models/<service>/…` (rebuild, dead letters) to that service.
 * The clock route exists only with CLOCK=manual.
 */
export function adminRoutes(
  app: FastifyInstance,
  options: { token: string; manualClock: ManualClock | null; services: Partial<Record<ServiceName, ServiceClient>>; media: MediaStore; maxUploadBytes: number },
): void {
  app.register(async (admin) => {
    admin.addHook('onRequest', async (request, reply) => {
      const bearer = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? '')?.[1]?.trim();
      if (!bearer || !sameSecret(bearer, options.token)) return reply.code(401).send(errorBody('authorization_failed', 'the admin API needs Authorization: Bearer <ADMIN_TOKEN>'));
    });

    if (options.manualClock) {
      const clock = options.manualClock;
      admin.post('/admin/clock/', async (request, reply) => {
        const body = ClockBody.safeParse(request.body ?? {});
        if (!body.success) return reply.code(400).send(errorBody('missing_request_data', `advance_seconds must be a positive number of seconds, at most ${MAX_ADVANCE_SECONDS} (a year)`));
        const now = clock.advance(body.data.advance_seconds);
        return { status: 200, now: now.toISOString() };
      });
    }

    const discard = (keys: readonly string[]) => Promise.all(keys.map((key) => options.media.delete(key).catch(() => undefined)));
    /** JSON and form bodies as they are; multipart ones with their files checked and stored first (the service receives UploadRefs). */
    const forwardTo = async (service: ServiceClient, request: FastifyRequest, reply: FastifyReply) => {
      // HEAD is asked of the service as GET; the gateway sends the answer without its body.
      const method = request.method === 'HEAD' ? 'GET' : request.method;
      const read =
        method === 'GET'
          ? undefined
          : request.isMultipart()
            ? await readMultipart(request, options.media, adminUploads, options.maxUploadBytes)
            : { fields: withoutClientUploadRefs(plainObject(request.body), adminUploads), stored: [] };
      const res = await service
        .request({ method, url: request.url, headers: { [internalHeaders.admin]: 'true', 'x-request-id': request.id }, ...(read === undefined ? {} : { body: read.fields }) })
        .catch(async (error: unknown) => {
          await discard(read?.stored ?? []);
          throw error;
        });
      if (res.statusCode >= 400) await discard(read?.stored ?? []);
      reply.code(res.statusCode).header('content-type', res.headers['content-type'] ?? 'application/json');
      const retryAfter = res.headers['retry-after'];
      if (typeof retryAfter === 'string') reply.header('retry-after', retryAfter);
      return reply.send(res.body);
    };
    /** Every method on a prefix (the wildcard alone does not match the collection itself, e.g. POST /admin/groups/). */
    const forwardPrefix = (prefix: string, service: ServiceClient | undefined) => {
      if (!service) return;
      const handler = (request: FastifyRequest, reply: FastifyReply) => forwardTo(service, request, reply);
      admin.all(prefix, handler);
      admin.all(`${prefix}/*`, handler);
    };
    forwardPrefix('/admin/groups', options.services.groups);
    forwardPrefix('/admin/access-requests', options.services.groups);
    forwardPrefix('/admin/accounts', options.services.identity);

    const readModels = async (request: FastifyRequest<{ Params: { service: string } }>, reply: FastifyReply) => {
      const name = request.params.service;
      const service = isReadModelService(name) ? options.services[name] : undefined;
      if (!service) {
        const known = readModelServices.join(', ');
        const why = name === 'identity' ? 'the identity service keeps no read models (it answers from its event streams)' : `there is no service ${name} with read models here`;
        return reply.code(404).send(errorBody('object_not_found', `${why}; services with read models: ${known}`));
      }
      return forwardTo(service, request, reply);
    };
    admin.all('/admin/read-models/:service', readModels);
    admin.all('/admin/read-models/:service/*', readModels);
  });
}

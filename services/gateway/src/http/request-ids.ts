import { REQUEST_ID_HEADER } from '@castie/platform';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

/**
 * Every answer carries the request's id (`x-request-id`): the client's own when it sent an
 * acceptable one, else the UUID the gateway generated (Fastify's genReqId). A person reporting a
 * problem can quote it, and an operator finds every log line of that request, in the gateway and
 * in the services it reached, under that id. Set when the answer is sent, so errors, 404s, 429s,
 * preflights and pages carry it too.
 */
export const requestIds = fp(
  async (app: FastifyInstance) => {
    app.addHook('onSend', (request, reply, payload, done) => {
      reply.header(REQUEST_ID_HEADER, request.id);
      done(null, payload);
    });
  },
  { name: 'castie-request-ids' },
);

type FrameworkErrorHandler = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void;

/** Errors Fastify answers before routing skip the hooks: such answers get the request's id here. */
export function withRequestId(handler: FrameworkErrorHandler): FrameworkErrorHandler {
  return (error, request, reply) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    handler(error, request, reply);
  };
}

import { allEndpoints, ErrorBodySchema, type Endpoint } from '@castie/contracts';
import { z } from 'zod';

const json = (schema: z.ZodType, io: 'input' | 'output') => z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;

/** OpenAPI path syntax: `/api/casties/:uuid/` → `/api/casties/{uuid}/`. */
const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, '{$1}');

function parameters(e: Endpoint) {
  const params = json(e.params, 'input') as { properties?: Record<string, unknown>; required?: string[] };
  const query = json(e.query, 'input') as { properties?: Record<string, unknown>; required?: string[] };
  return [
    ...Object.entries(params.properties ?? {}).map(([name, schema]) => ({ name, in: 'path', required: true, schema })),
    ...Object.entries(query.properties ?? {}).map(([name, schema]) => ({ name, in: 'query', required: (query.required ?? []).includes(name), schema })),
  ];
}

/**
 * The OpenAPI document of the public API, generated from the same contracts the gateway routes
 * by and the services validate with, so it cannot drift from what runs.
 */
export function openApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const e of allEndpoints) {
    for (const path of e.paths) {
      const body = json(e.body, 'input') as { properties?: Record<string, unknown> };
      const hasBody = e.method === 'POST' && Object.keys(body.properties ?? {}).length > 0;
      // Files travel only as multipart file parts: the JSON form has no upload fields at all.
      const uploads = e.uploads ?? [];
      const formSchema = uploads.length ? { ...body, properties: Object.fromEntries(Object.entries(body.properties ?? {}).map(([k, v]) => [k, uploads.includes(k) ? { type: 'string', format: 'binary' } : v])) } : body;
      const jsonSchema = uploads.length ? { ...body, properties: Object.fromEntries(Object.entries(body.properties ?? {}).filter(([k]) => !uploads.includes(k))) } : body;
      (paths[openApiPath(path)] ??= {})[e.method.toLowerCase()] = {
        tags: [e.service],
        security: e.access === 'user' ? [{ basic: [] }] : [],
        parameters: parameters(e),
        ...(hasBody
          ? {
              requestBody: {
                required: true,
                content: {
                  [e.uploads?.length ? 'multipart/form-data' : 'application/x-www-form-urlencoded']: { schema: formSchema },
                  'application/json': { schema: jsonSchema },
                },
              },
            }
          : {}),
        responses: {
          200: { description: 'success', content: { 'application/json': { schema: json(e.response, 'output') } } },
          400: { description: 'refused (error_type says why)', content: { 'application/json': { schema: json(ErrorBodySchema, 'output') } } },
          ...(e.access === 'user' ? { 401: { description: 'authentication_failed', content: { 'application/json': { schema: json(ErrorBodySchema, 'output') } } } } : {}),
          404: { description: 'not found', content: { 'application/json': { schema: json(ErrorBodySchema, 'output') } } },
        },
      };
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Castie API',
      version: '1',
      description:
        'POST bodies are form-encoded (multipart for files) or JSON. Credentials: HTTP Basic (e-mail:password) or username/password body fields. Every body carries status (= HTTP status); errors carry error_type and error_message.',
    },
    components: { securitySchemes: { basic: { type: 'http', scheme: 'basic' } } },
    paths,
  };
}

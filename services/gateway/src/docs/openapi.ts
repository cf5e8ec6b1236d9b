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

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A plain, dependency-free page listing the endpoints (the JSON is at /docs/openapi.json). */
export function docsPage(doc: Record<string, unknown>): string {
  const paths = doc.paths as Record<string, Record<string, { tags: string[]; security: unknown[] }>>;
  const rows = Object.entries(paths)
    .flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => `<tr><td>${method.toUpperCase()}</td><td><code>${escape(path)}</code></td><td>${escape(op.tags.join(', '))}</td><td>${op.security.length ? 'user' : 'open'}</td></tr>`))
    .join('\n');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Castie API</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem}td{padding:.2rem .8rem;border-bottom:1px solid #ddd}</style></head>
<body><h1>Castie API</h1><p>Machine-readable: <a href="/docs/openapi.json">/docs/openapi.json</a> (OpenAPI 3.1).</p>
<table><tr><th>method</th><th>path</th><th>service</th><th>credentials</th></tr>${rows}</table></body></html>`;
}

import type { FastifyInstance } from 'fastify';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The page's policy: everything from this origin, nothing from anywhere else (no CDN, no font
 * host, no validator badge). `data:` images are the icons inlined in swagger-ui.css.
 */
export const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The files of swagger-ui-dist the page loads, by the name it asks for them. */
const SWAGGER_FILES: Record<string, string> = {
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

/**
 * swagger-ui-dist's directory, resolved from this module when first asked: beside the sources in
 * development and tests, and from `packages/system/dist/` in the built system, which leaves the
 * package out of the bundle and ships it as a runtime dependency (its files are served, not run).
 */
let swaggerDir: string | null = null;
const swaggerUiDir = () => (swaggerDir ??= dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json')));

// Runs in the browser. Loads the document, adapts how it is shown (never the document served at
// /docs/openapi.json) and starts Swagger UI. A file of its own, since the policy forbids inline scripts.
const INIT_SCRIPT = `'use strict';
(async () => {
  const root = document.getElementById('swagger-ui');
  let doc;
  try {
    const res = await fetch('/docs/openapi.json', { headers: { accept: 'application/json' } });
    if (!res.ok) throw new Error('HTTP ' + res.status);
    doc = await res.json();
  } catch (error) {
    root.textContent = 'The OpenAPI document could not be loaded (' + error.message + '): /docs/openapi.json';
    return;
  }
  // "Try it out" calls this origin first: the page's policy lets it reach no other.
  const here = location.origin;
  const servers = Array.isArray(doc.servers) ? doc.servers : [];
  if (servers.length > 0 && !servers.some((s) => { try { return new URL(s.url, here).origin === here; } catch { return false; } })) {
    doc.servers = [{ url: here, description: 'this server' }, ...servers];
  }
  // A gateway started with API_KEYS wants an Api-Key header on every /api/ request. A document
  // that does not declare that scheme gets it here, so the Authorize dialog can send one.
  const schemes = ((doc.components ??= {}).securitySchemes ??= {});
  const declared = Object.values(schemes).some((s) => s && s.type === 'apiKey' && s.in === 'header' && String(s.name).toLowerCase() === 'api-key');
  if (!declared) {
    schemes['Api-Key'] = { type: 'apiKey', in: 'header', name: 'Api-Key', description: 'Only when the server is configured with API keys (API_KEYS): then every /api/ request needs one.' };
    for (const [path, item] of Object.entries(doc.paths ?? {})) {
      if (!path.startsWith('/api/')) continue;
      for (const op of Object.values(item)) {
        if (!op || typeof op !== 'object' || !('responses' in op)) continue;
        const alternatives = op.security ?? doc.security ?? [];
        op.security = alternatives.length > 0 ? alternatives.map((r) => ({ ...r, 'Api-Key': [] })) : [{ 'Api-Key': [] }];
      }
    }
  }
  window.ui = SwaggerUIBundle({
    spec: doc,
    dom_id: '#swagger-ui',
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    deepLinking: true,
    filter: true,
    displayOperationId: true,
    displayRequestDuration: true,
    docExpansion: 'list',
    // The default asks validator.swagger.io for a badge: no request leaves this origin.
    validatorUrl: null,
    // Credentials live in this page only: nothing is written to the browser's storage.
    persistAuthorization: false,
  });
})();
`;

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

/**
 * The /docs page: Swagger UI on the OpenAPI document, and for a browser without JavaScript a plain
 * list of the operations.
 */
export function docsPage(doc: Record<string, unknown>): string {
  const paths = (doc.paths ?? {}) as Record<string, Record<string, { summary?: string; tags?: string[] }>>;
  const rows = Object.entries(paths)
    .flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([method]) => HTTP_METHODS.has(method))
        .map(([method, op]) => `<tr><td>${method.toUpperCase()}</td><td><code>${escape(path)}</code></td><td>${escape(op.summary ?? '')}</td><td>${escape((op.tags ?? []).join(', '))}</td></tr>`),
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Castie API</title>
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<script src="/docs/assets/swagger-ui-bundle.js" defer></script>
<script src="/docs/assets/castie-docs.js" defer></script>
</head><body>
<div id="swagger-ui"></div>
<noscript><h1>Castie API</h1><p>The interactive reference needs JavaScript. Machine-readable: <a href="/docs/openapi.json">/docs/openapi.json</a> (OpenAPI 3.1).</p>
<table><tr><th>method</th><th>path</th><th>summary</th><th>tags</th></tr>${rows}</table></noscript>
</body></html>`;
}

/**
 * `GET|HEAD /docs` (the page) and `/docs/assets/<file>` (Swagger UI's files from swagger-ui-dist
 * and the page's script), all from this process: the page works offline and loads nothing from a
 * CDN. The OpenAPI document itself is served beside them, at /docs/openapi.json.
 */
export function docsRoutes(app: FastifyInstance, doc: Record<string, unknown>): void {
  const page = docsPage(doc);
  app.route({
    method: ['GET', 'HEAD'],
    url: '/docs',
    handler: async (_request, reply) => reply.type('text/html; charset=utf-8').header('content-security-policy', DOCS_CSP).header('cache-control', 'no-cache').send(page),
  });
  const files = new Map<string, Promise<Buffer>>();
  app.route<{ Params: { file: string } }>({
    method: ['GET', 'HEAD'],
    url: '/docs/assets/:file',
    handler: async (request, reply) => {
      const { file } = request.params;
      if (file === 'castie-docs.js') return reply.type('application/javascript; charset=utf-8').header('cache-control', 'no-cache').send(INIT_SCRIPT);
      const type = SWAGGER_FILES[file];
      if (!type) return reply.callNotFound();
      let bytes = files.get(file);
      if (!bytes) {
        bytes = readFile(join(swaggerUiDir(), file));
        files.set(file, bytes);
        bytes.catch(() => files.delete(file));
      }
      return reply.type(type).header('cache-control', 'public, max-age=3600').send(await bytes);
    },
  });
}

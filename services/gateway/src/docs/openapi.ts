import {
  AdminClockBodySchema,
  AdminClockResponseSchema,
  api,
  ErrorBodySchema,
  OwnDataExportQuerySchema,
  OwnDataExportSchema,
  groupsAdminApi,
  HealthSchema,
  identityAdminApi,
  notificationsLiveApi,
  PasswordResetEmailFormSchema,
  PasswordResetFormSchema,
  PasswordResetTokenParams,
  ReadinessSchema,
  readModelsAdminApi,
  readModelServices,
  type Endpoint,
} from '@castie/contracts';
import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject, type ZodOpenApiResponseObject, type ZodOpenApiResponsesObject } from 'zod-openapi';
import { operationIds, readModelOperationSummaries, statusAdjustments, summaries } from './catalog.ts';
import { responseExamples } from './examples.ts';

/** OpenAPI path syntax: `/api/casties/:uuid/` → `/api/casties/{uuid}/`. */
const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, '{$1}');
const pathParamNames = (path: string) => [...path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!);
const capitalised = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

type Schema = z.ZodType;
type JsonSchema = Record<string, unknown>;
const defOf = (schema: Schema) => (schema as unknown as { _zod: { def: { type: string; innerType?: Schema; in?: Schema; out?: Schema; shape?: Record<string, Schema> } } })._zod.def;
const isTransform = (schema: Schema) => (schema as unknown as { _zod: { traits: Set<string> } })._zod.traits.has('$ZodTransform');

/** The schema without its optional/default wrapper (a path parameter is always present). */
function required(schema: Schema): Schema {
  const def = defOf(schema);
  return (def.type === 'optional' || def.type === 'default' || def.type === 'prefault') && def.innerType ? required(def.innerType) : schema;
}

/**
 * Renders what JSON Schema cannot see by itself:
 * - the request side of `text().pipe(rule)`: zod documents the input of a pipe as its first stage
 *   (a trimmed string), so the enum, pattern or length the second stage enforces is merged in;
 * - zod's safe-integer bounds (±2^53−1), which say nothing and only clutter generated clients.
 */
function override(ctx: { zodSchema: unknown; jsonSchema: JsonSchema; io: 'input' | 'output' }): void {
  const schema = ctx.zodSchema as Schema;
  const def = defOf(schema);
  if (ctx.io === 'input' && def.type === 'pipe' && def.in && def.out && !isTransform(def.in) && !isTransform(def.out)) {
    const out = z.toJSONSchema(def.out, { io: 'input', unrepresentable: 'any', override: (c) => override({ ...c, io: 'input' } as never) }) as JsonSchema;
    delete out.$schema;
    const keepInteger = ctx.jsonSchema.type === 'integer' && out.type === 'number';
    // A list's items keep what the first stage said of them (e.g. each answer option's length).
    const items = ctx.jsonSchema.items && out.items ? { ...(out.items as JsonSchema), ...(ctx.jsonSchema.items as JsonSchema) } : undefined;
    Object.assign(ctx.jsonSchema, out, items ? { items } : {});
    if (keepInteger) ctx.jsonSchema.type = 'integer';
  }
  if (ctx.jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete ctx.jsonSchema.minimum;
  if (ctx.jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete ctx.jsonSchema.maximum;
}

/**
 * A request object as clients may send it: a field the server fills in when absent (a default, a
 * repeated value that may be missing) is optional, whatever its parsed type says.
 */
function asSent(object: Schema, fields?: (name: string, schema: Schema) => Schema | null): z.ZodObject {
  const shape: Record<string, Schema> = {};
  for (const [name, field] of Object.entries(defOf(object).shape ?? {})) {
    const kept = fields ? fields(name, field) : field;
    if (!kept) continue;
    const optional = kept.safeParse(undefined).success && defOf(kept).type !== 'optional';
    shape[name] = optional ? kept.optional() : kept;
  }
  const meta = z.globalRegistry.get(object);
  const rebuilt = z.object(shape);
  return meta ? rebuilt.meta(meta) : rebuilt;
}

const errorContent = { 'application/json': { schema: ErrorBodySchema } };
const errorResponses: Record<number, (o: Op) => ZodOpenApiResponseObject> = {
  400: (o) => ({ description: `Refused: a missing or malformed parameter (missing_request_data${o.invalidAs ? `, ${o.invalidAs}` : ''}, naming it) or a rule of the domain; error_type says which`, content: errorContent }),
  401: (o) =>
    o.access === 'admin'
      ? { description: 'authorization_failed: no or a wrong `Authorization: Bearer <ADMIN_TOKEN>`', content: errorContent }
      : o.access === 'user'
        ? { description: 'authentication_failed: no or wrong credentials; authorization_failed: no valid Api-Key where keys are configured', content: errorContent }
        : { description: 'authorization_failed: no valid Api-Key where the deployment configures keys', content: errorContent },
  404: () => ({ description: 'object_not_found (or inactive_user for a deleted profile): what the path names does not exist or is not visible to the requester', content: errorContent }),
  429: () => ({
    description: 'too_many_requests: too many attempts (failed credentials, sign-ups, reset mails, or the user’s request budget); retry after Retry-After seconds',
    headers: { 'Retry-After': { description: 'seconds to wait', schema: { type: 'integer', minimum: 1 } } },
    content: errorContent,
  }),
};
const defaultError = {
  description: 'Any other failure in the error envelope: 503 service_unavailable (with Retry-After) while an operator rebuilds the answering service’s read models or while identity cannot check credentials, 500 server_error (details hidden)',
  content: errorContent,
};

/** One documented operation before rendering. */
interface Op {
  id: string;
  method: 'get' | 'post';
  path: string;
  tag: string;
  summary: string;
  description?: string;
  /** user: credentials (and Api-Key where configured); open: /api/ without credentials; admin: bearer; public: nothing. */
  access: 'user' | 'open' | 'admin' | 'public';
  invalidAs?: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: { schema: Schema; uploads: readonly string[]; required: boolean };
  /** 200 content (JSON schema by default). */
  ok: ZodOpenApiResponseObject;
  statuses: number[];
}

const security: Record<Op['access'], Record<string, string[]>[]> = {
  // Api-Key only where the deployment configures keys: with it or without.
  user: [{ basicAuth: [], apiKey: [] }, { basicAuth: [] }],
  open: [{ apiKey: [] }, {}],
  admin: [{ adminToken: [] }],
  public: [],
};

/** Body credentials (decisions.md): `username` and `password` fields work wherever Basic does. */
const bodyCredentials = {
  username: z.string().meta({ description: 'Credentials in the body instead of HTTP Basic: the account’s e-mail address' }),
  password: z.string().meta({ description: 'Credentials in the body instead of HTTP Basic: the password' }),
};

function fromEndpoint(e: Endpoint, key: string, service: string, admin: boolean): Op[] {
  return e.paths.map((path, i) => {
    const base = operationIds[`${service}.${key}`] ?? (admin ? `admin${capitalised(key)}` : key);
    const id = i === 0 ? base : ({ home: 'homeTab', leaderboard: 'groupLeaderboard' } as Record<string, string>)[base] ?? `${base}${i}`;
    const names = pathParamNames(path);
    const paramShape = defOf(e.params).shape ?? {};
    const params = names.length ? z.object(Object.fromEntries(names.map((n) => [n, required(paramShape[n] ?? z.string())]))) : undefined;
    const query = Object.keys(defOf(e.query).shape ?? {}).length ? asSent(e.query) : undefined;
    const access = (admin ? 'admin' : e.access === 'user' ? 'user' : 'open') as Op['access'];
    const bodyFields = Object.keys(defOf(e.body).shape ?? {});
    const body = e.method === 'POST' && (bodyFields.length > 0 || access === 'user') ? { schema: e.body, uploads: e.uploads ?? [], required: e.body.safeParse({}).success === false } : undefined;
    const statuses = [
      ...(bodyFields.length || query || (params && names.some((n) => !(paramShape[n] ?? z.string()).safeParse('x').success)) ? [400] : []),
      ...(access === 'public' ? [] : [401]),
      ...(names.length ? [404] : []),
      ...(access === 'user' || path.startsWith('/api/signup/') ? [429] : []),
    ];
    const adjust = statusAdjustments[id] ?? {};
    return {
      id,
      method: e.method === 'GET' ? 'get' : 'post',
      path: openApiPath(path),
      tag: admin ? 'admin' : service,
      summary: summaries[id] ?? id,
      access,
      ...(e.invalidAs ? { invalidAs: e.invalidAs } : {}),
      ...(params ? { params } : {}),
      ...(query ? { query } : {}),
      ...(body ? { body } : {}),
      ok: { description: 'success', content: { 'application/json': { schema: e.response } } },
      statuses: [...new Set([...statuses, ...(adjust.add ?? [])])].filter((s) => !(adjust.remove ?? []).includes(s)).sort(),
    } satisfies Op;
  });
}

const html = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' as const } } } });
const htmlError = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' as const } } } });

/** Live notification counts: served by the gateway itself (LiveStreams), documented from their contracts. */
function liveOperations(): Op[] {
  const [token] = fromEndpoint(notificationsLiveApi.streamToken as unknown as Endpoint, 'streamToken', 'notifications', false);
  const [stream] = fromEndpoint(notificationsLiveApi.stream as unknown as Endpoint, 'stream', 'notifications', false);
  token!.id = 'notificationStreamToken';
  token!.summary = summaries.notificationStreamToken!;
  token!.description = 'For browsers, whose EventSource cannot send an Authorization header. The token opens streams (any number, within the limits) until it expires (`expires_in`, LIVE_TOKEN_SECONDS, default 60); a stream it opened stays open after that. Only a hash of it is kept.';
  stream!.id = 'notificationStream';
  stream!.summary = summaries.notificationStream!;
  stream!.description = [
    'Server-Sent Events. Credentials as on any request (HTTP Basic), or `?token=` from POST /api/notifications/stream-token/ (then no Api-Key either: EventSource cannot send headers, and the token was issued to a request that carried one).',
    'Each `counts` event carries, as JSON in `data`, the counts GET /api/initialize/ answers at that moment (`number_notifications`, `needs_answer`, `number_needing_answer`, without `status`): at once on connecting, then whenever they change for the user (a friend request, an acceptance, a forecast on their Castie, an answer, a new Castie in a followed group, group access granted, a Castie of theirs reaching its end time, opening the Activity section).',
    'Its `id` names the counts (`<number_notifications>.<number_needing_answer>`): a client reconnecting with `Last-Event-ID` gets the current counts at once unless they are the ones it holds. A `: heartbeat` comment comes every LIVE_HEARTBEAT_MS (default 15 s); a client that reads nothing for that long is dropped. `retry: 3000` asks clients to wait 3 s before reconnecting.',
    'At most LIVE_STREAMS_PER_USER (default 5) open streams per user and LIVE_STREAMS_TOTAL (default 10,000) per gateway: one more answers 429.',
  ].join('\n\n');
  stream!.ok = {
    description: 'an endless event stream: `id: 1.0`, `event: counts`, `data: {"number_notifications":1,"needs_answer":false,"number_needing_answer":0}`, and `: heartbeat` comments',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  };
  // An unusable token is a credential failure (401), never a malformed request.
  stream!.statuses = stream!.statuses.filter((s) => s !== 400);
  return [token!, stream!];
}

/** Routes the gateway serves outside the endpoint table. */
function otherOperations(): Op[] {
  const page = (id: string, method: Op['method'], path: string, extra: Partial<Op>): Op => ({ id, method, path, tag: 'pages', summary: summaries[id]!, access: 'public', ok: html('the page'), statuses: [], ...extra });
  return [
    {
      id: 'adminAdvanceClock',
      method: 'post',
      path: '/admin/clock/',
      tag: 'admin',
      summary: summaries.adminAdvanceClock!,
      description: 'Exists only when the process runs with CLOCK=manual (tests, demos); otherwise 404.',
      access: 'admin',
      body: { schema: AdminClockBodySchema, uploads: [], required: true },
      ok: { description: 'the new time of every service', content: { 'application/json': { schema: AdminClockResponseSchema } } },
      statuses: [400, 401],
    },
    page('passwordResetPage', 'get', '/password_reset/', {}),
    page('passwordResetRequest', 'post', '/password_reset/', {
      description: 'Answers the same page whether or not an account has that address.',
      body: { schema: PasswordResetEmailFormSchema, uploads: [], required: true },
      ok: html('the link was sent (if the account exists)'),
      statuses: [400, 429],
    }),
    page('passwordResetLinkPage', 'get', '/password_reset/{token}/', { params: PasswordResetTokenParams, statuses: [400] }),
    page('passwordResetChoose', 'post', '/password_reset/{token}/', {
      params: PasswordResetTokenParams,
      body: { schema: PasswordResetFormSchema, uploads: [], required: true },
      ok: html('the password was changed'),
      statuses: [400],
    }),
    {
      id: 'getMedia',
      method: 'get',
      path: '/media/uploads/{file}',
      tag: 'media',
      summary: summaries.getMedia!,
      description: 'Every picture location in responses (profPic, groupIcon, friendPics) is such a path. Files never change (cached for a year).',
      access: 'public',
      params: z.object({ file: z.string().regex(/^[A-Za-z0-9_.-]+$/).meta({ example: '3f2a9c0e4b1d4e7f8a6b5c4d3e2f1a0b.png' }) }),
      ok: {
        description: 'the picture',
        content: Object.fromEntries(['image/png', 'image/jpeg', 'image/gif'].map((type) => [type, { schema: { type: 'string' as const, contentMediaType: type } }])),
      },
      statuses: [404],
    },
    {
      id: 'ownDataExport',
      method: 'get',
      path: '/api/export/',
      tag: 'export',
      summary: summaries.ownDataExport!,
      description: [
        'Everything of the requester: profile, preferences, groups followed or requested, frodads and frodad requests, notifications (as the Activity section lists them, without marking them read), Casties created with their answers, forecasts with outcomes and points, comments. Other people appear only as the requester already sees them (frodads by handle and name).',
        'The answer is streamed (chunked) as it is read, page by page, so its size is not limited by memory; an answer cut off before its end (a failure after it started) does not parse and must be asked again.',
        '`format=csv`: a zip (`application/zip`) of `forecasts.csv`, `casties.csv` and `comments.csv` (UTF-8, RFC 4180, header row, CRLF). Text cells are always quoted; a text cell starting with `=`, `+`, `-`, `@`, a tab or a carriage return is prefixed with an apostrophe so that spreadsheets do not run it as a formula.',
        'One export at a time per person: another one while it runs answers 429. The request counts against the person’s request budget like any other.',
      ].join('\n\n'),
      access: 'user',
      query: asSent(OwnDataExportQuerySchema),
      ok: {
        description: 'the export, as an attachment',
        headers: { 'Content-Disposition': { description: '`attachment; filename="castie-export.json"` (or `.zip`)', schema: { type: 'string' } } },
        content: {
          'application/json': { schema: OwnDataExportSchema },
          'application/zip': { schema: { type: 'string' as const, contentMediaType: 'application/zip' } },
        },
      },
      statuses: [400, 401, 429],
    },
    { id: 'healthz', method: 'get', path: '/healthz', tag: 'operations', summary: summaries.healthz!, access: 'public', ok: { description: 'alive', content: { 'application/json': { schema: HealthSchema } } }, statuses: [] },
    {
      id: 'readyz',
      method: 'get',
      path: '/readyz',
      tag: 'operations',
      summary: summaries.readyz!,
      access: 'public',
      ok: { description: 'ready', content: { 'application/json': { schema: ReadinessSchema } } },
      statuses: [],
    },
    { id: 'metrics', method: 'get', path: '/metrics', tag: 'operations', summary: summaries.metrics!, description: 'Restrict it at the ingress.', access: 'public', ok: { description: 'Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } }, statuses: [] },
    { id: 'docsPage', method: 'get', path: '/docs', tag: 'docs', summary: summaries.docsPage!, access: 'public', ok: html('the reference'), statuses: [] },
    { id: 'openApiDocument', method: 'get', path: '/docs/openapi.json', tag: 'docs', summary: summaries.openApiDocument!, access: 'public', ok: { description: 'OpenAPI 3.1', content: { 'application/json': { schema: { type: 'object' } } } }, statuses: [] },
  ];
}

/** Every operation the system serves, in document order. */
export function documentedOperations(): Op[] {
  const ops: Op[] = [];
  for (const [service, endpoints] of Object.entries(api)) for (const [key, e] of Object.entries(endpoints)) ops.push(...fromEndpoint(e as unknown as Endpoint, key, service, false));
  for (const [key, e] of Object.entries({ ...groupsAdminApi, ...identityAdminApi })) ops.push(...fromEndpoint(e as unknown as Endpoint, key, 'admin', true));
  for (const service of readModelServices) {
    for (const [key, e] of Object.entries(readModelsAdminApi(service))) {
      const [op] = fromEndpoint(e as unknown as Endpoint, key, 'admin', true);
      op!.id = `admin${capitalised(service)}ReadModels${capitalised(key)}`;
      op!.summary = readModelOperationSummaries[key]!.replace('{service}', service);
      if (key === 'replay') op!.statuses = [...new Set([...op!.statuses, 400])].sort();
      ops.push(op!);
    }
  }
  ops.push(...liveOperations());
  ops.push(...otherOperations());
  return ops;
}

function requestBody(op: Op) {
  const { schema, uploads } = op.body!;
  const credentials = op.access === 'user' ? bodyCredentials : {};
  const withCredentials = (object: z.ZodObject) => {
    const extra = Object.fromEntries(Object.entries(credentials).filter(([k]) => !(k in object.shape)));
    const meta = z.globalRegistry.get(object);
    const merged = object.extend(Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, (v as z.ZodString).optional()])));
    return meta ? merged.meta(meta) : merged;
  };
  // Files travel only as multipart file parts; the other encodings carry the text fields alone.
  const textOnly = withCredentials(asSent(schema, (name, field) => (uploads.includes(name) ? null : field)));
  const multipart = withCredentials(asSent(schema, (name, field) => (uploads.includes(name) ? z.string().meta({ format: 'binary', contentMediaType: 'image/*', description: 'a picture: png, jpeg or gif' }).optional() : field)));
  return {
    required: op.body!.required,
    content: {
      'application/x-www-form-urlencoded': { schema: textOnly },
      'multipart/form-data': { schema: uploads.length ? multipart : textOnly },
      'application/json': { schema: textOnly },
    },
  };
}

function operation(op: Op): ZodOpenApiOperationObject {
  const example = responseExamples[op.id];
  const okResponse = example !== undefined && op.ok.content?.['application/json'] ? { ...op.ok, content: { 'application/json': { ...op.ok.content['application/json'], example } } } : op.ok;
  const responses: Record<string, ZodOpenApiResponseObject> = { '200': okResponse };
  for (const status of op.statuses) {
    if (op.tag === 'pages') responses[String(status)] = status === 429 ? { ...errorResponses[429]!(op) } : htmlError('the page again, saying what is wrong');
    else responses[String(status)] = errorResponses[status]!(op);
  }
  if (op.id === 'readyz') responses.default = { description: '503: not ready (a read model behind the log, rebuilding, or a check failed); the same body with status not_ready', content: { 'application/json': { schema: ReadinessSchema } } };
  else if (op.access !== 'public' || op.tag === 'media') responses.default = defaultError;
  return {
    operationId: op.id,
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tags: [op.tag],
    security: security[op.access],
    ...(op.params || op.query ? { requestParams: { ...(op.params ? { path: op.params } : {}), ...(op.query ? { query: op.query } : {}) } } : {}),
    ...(op.body ? { requestBody: requestBody(op) } : {}),
    responses: responses as ZodOpenApiResponsesObject,
  };
}

const tags = [
  { name: 'identity', description: 'Sign-up, account, preferences and profile edits' },
  { name: 'groups', description: 'Groups, following, followers and access requests' },
  { name: 'casties', description: 'Casties, forecasts, answers, comments, feeds, search, profiles’ Casties and leaderboards' },
  { name: 'social', description: 'Frodad (friend) requests, frodads and people search' },
  { name: 'notifications', description: 'Notifications, counts and sign-in' },
  { name: 'export', description: 'One’s own data to take along' },
  { name: 'admin', description: 'The operators’ API: `Authorization: Bearer <ADMIN_TOKEN>`' },
  { name: 'pages', description: 'Password reset in a browser (HTML pages)' },
  { name: 'media', description: 'Stored pictures' },
  { name: 'operations', description: 'Probes and metrics of every process (no credentials)' },
  { name: 'docs', description: 'This reference' },
];

/**
 * The OpenAPI document of everything the system serves, generated with zod-openapi from the same
 * contracts the gateway routes by and the services validate with, so it cannot drift from what
 * runs. Examples are real responses captured by the docs session (examples.ts).
 */
export function openApiDocument(): Record<string, unknown> {
  const paths: ZodOpenApiPathsObject = {};
  for (const op of documentedOperations()) (paths[op.path] ??= {})[op.method] = operation(op);
  return createDocument(
    {
      openapi: '3.1.0',
      info: {
        title: 'Castie API',
        version: '2',
        summary: 'The social forecasting service: Casties, forecasts, groups, frodads, comments and notifications.',
        description: [
          'Every JSON body carries `status` (= the HTTP status); errors carry `error_type` and `error_message` (the `Error` schema).',
          'POST bodies may be `application/x-www-form-urlencoded`, `multipart/form-data` (needed for files) or JSON. Form booleans also accept True/False/1/0/on/off; repeated fields (`answer_option`, `groups`, `notification_type`) are sent once per value.',
          'Credentials: HTTP Basic with e-mail:password, or `username` and `password` fields in the body (any method). Paths work with and without the trailing slash; HEAD works wherever GET does.',
          'Dates are YYYY-MM-DD and times HH:MM:SS.mmmmmm in the service’s time zone unless a field says otherwise.',
        ].join('\n\n'),
        license: { name: 'Proprietary: all rights reserved', identifier: 'LicenseRef-Castie-Proprietary' },
      },
      servers: [
        { url: '/', description: 'The server that serves this document' },
        { url: 'http://{host}', description: 'A server by its address, e.g. a local `npm start` on localhost:8080', variables: { host: { default: 'localhost:8080', description: 'host and port' } } },
      ],
      tags,
      security: security.user,
      components: {
        securitySchemes: {
          basicAuth: {
            type: 'http',
            scheme: 'basic',
            description: 'The account’s e-mail address and password. The same credentials are also accepted as `username` and `password` fields of the request body (documented on each POST body), which OpenAPI cannot express as a scheme.',
          },
          apiKey: { type: 'apiKey', in: 'header', name: 'Api-Key', description: 'Needed on every /api/ request only when the deployment configures API keys (API_KEYS); else omitted.' },
          adminToken: { type: 'http', scheme: 'bearer', description: 'The operators’ ADMIN_TOKEN (the embedded profile prints a generated one when unset).' },
        },
      },
      paths,
    },
    { override: override as never },
  ) as unknown as Record<string, unknown>;
}

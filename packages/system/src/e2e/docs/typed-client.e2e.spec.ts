import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newUser, TestSystem } from '../../testing/harness.ts';

// What a client developer does with /docs/openapi.json: generate types with openapi-typescript,
// write a client with openapi-fetch, compile it with tsc, and run it against the system.
//
// The client lives in a temporary directory inside this package's node_modules/.cache, so that it
// resolves `openapi-fetch` as any project would (tsc and Node alike), and goes when the test ends.
const system = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

/** The client, as a developer would write it: every path, parameter, body and answer is typed by the document. */
const CLIENT = `import createClient from 'openapi-fetch';
import type { paths } from './castie-api.ts';

type Answer<T> = { data?: T; error?: unknown; response: Response };

/** The data of a successful answer; anything else throws with what the server said. */
async function ok<T>(call: Promise<Answer<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok || data === undefined) throw new Error(\`\${response.url}: \${response.status} \${JSON.stringify(error)}\`);
  return data;
}

export interface NewUser {
  email: string;
  password: string;
  handle: string;
}

/** Signs a new user up (the four steps), logs in, reads preferences, follows a group and asks a question in it. */
export async function session(baseUrl: string, user: NewUser, groupSlug: string) {
  const anyone = createClient<paths>({ baseUrl });
  await ok(anyone.POST('/api/signup/email/', { body: { email: user.email } }));
  await ok(anyone.POST('/api/signup/password/', { body: { email: user.email, password: user.password } }));
  const named = await ok(anyone.POST('/api/signup/handle/', { body: { email: user.email, handle: user.handle, first_name: 'Ada', last_name: 'Lovelace' } }));
  await ok(anyone.POST('/api/signup/picture/', { body: { email: user.email, handle: user.handle } }));

  const me = createClient<paths>({ baseUrl, headers: { authorization: 'Basic ' + btoa(user.email + ':' + user.password) } });
  const login = await ok(me.POST('/api/login/', { body: { last_seen_date: '2026-02-28', last_seen_time: '10:00:00' } }));
  const preferences = await ok(me.GET('/api/preferences/'));
  const follow = await ok(me.POST('/api/groups/{group_slug}/follow/', { params: { path: { group_slug: groupSlug } } }));
  const created = await ok(
    me.POST('/api/casties/create/', {
      body: { group_slug: groupSlug, poll_type: 'Open', question: 'Does the typed client compile?', answer_type: 'Set answer options', answer_option: ['Yes', 'No'], display_created_by: true },
    }),
  );
  const read = await ok(me.GET('/api/casties/{uuid}/', { params: { path: { uuid: created.castie_uuid } } }));
  const refused = await me.GET('/api/casties/{uuid}/', { params: { path: { uuid: '00000000-0000-4000-8000-000000000000' } } });
  // The operations whose generated types once demanded phantom path parameters (tab, group_slug) or a required filter.
  const home = await ok(me.GET('/api/home/'));
  const board = await ok(me.GET('/api/leaderboard/'));
  const notifications = await ok(me.GET('/api/notifications/'));
  return {
    homeHasIt: JSON.stringify(home).includes(created.castie_uuid),
    boardStatus: board.status,
    notificationsStatus: notifications.status,
    handle: named.handle,
    loggedInAs: login.profile_handle,
    isPrivate: preferences.is_private,
    following: follow.following,
    question: read.castie.question,
    groupSlug: read.castie.groupSlug,
    refused: { status: refused.response.status, errorType: refused.error?.error_type },
  };
}
`;

const TSCONFIG = {
  compilerOptions: {
    strict: true,
    noEmit: true,
    target: 'ES2022',
    module: 'ESNext',
    moduleResolution: 'Bundler',
    allowImportingTsExtensions: true,
    lib: ['ES2022', 'DOM'],
    types: [],
    // openapi-fetch's own declarations are its business; the generated types and the client are checked.
    skipLibCheck: true,
  },
  files: ['client.ts'],
};

describe('a client typed by the OpenAPI document (openapi-typescript + openapi-fetch)', { timeout: 120_000 }, () => {
  let sys: TestSystem;
  let base: string;
  let dir: string;

  beforeAll(async () => {
    sys = await TestSystem.start();
    await sys.system.gateway.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(sys.system.gateway.server.address() as { port: number }).port}`;
    expect((await sys.admin('POST', '/admin/groups/', { slug: 'typed', groupName: 'Typed', groupInfoText: 'Typed clients', requiresApproval: false, accessDeniedMessage: '' })).status).toBe(200);
    await mkdir(join(system, 'node_modules', '.cache'), { recursive: true });
    dir = await mkdtemp(join(system, 'node_modules', '.cache', 'castie-typed-client-'));
  });
  afterAll(async () => {
    await sys?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('generates types from the served document, compiles a client with tsc and drives a session with it', async () => {
    // The document exactly as served: openApiDocument(), the one a client developer downloads.
    const doc = (await (await fetch(`${base}/docs/openapi.json`)).json()) as OpenAPI3;
    await writeFile(join(dir, 'castie-api.ts'), astToString(await openapiTS(doc)));
    await writeFile(join(dir, 'client.ts'), CLIENT);
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));

    const compiled = spawnSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8' });
    expect(compiled.stdout + compiled.stderr).toBe('');
    expect(compiled.status).toBe(0);

    // tsc only checks; the same source, stripped of its types, is what runs.
    const js = ts.transpileModule(await readFile(join(dir, 'client.ts'), 'utf8'), { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false } }).outputText;
    await writeFile(join(dir, 'client.mjs'), js);
    const client = (await import(pathToFileURL(join(dir, 'client.mjs')).href)) as { session: (baseUrl: string, user: { email: string; password: string; handle: string }, group: string) => Promise<Record<string, unknown>> };
    const user = newUser('typed');
    expect(await client.session(base, user, 'typed')).toEqual({
      homeHasIt: true,
      boardStatus: 200,
      notificationsStatus: 200,
      handle: user.handle,
      loggedInAs: user.handle,
      isPrivate: false,
      following: true,
      question: 'Does the typed client compile?',
      groupSlug: 'typed',
      refused: { status: 404, errorType: 'object_not_found' },
    });
  });

  it('the compiler refuses a call the document does not allow (the check has teeth)', async () => {
    await writeFile(join(dir, 'wrong.ts'), `import createClient from 'openapi-fetch';\nimport type { paths } from './castie-api.ts';\nconst c = createClient<paths>({ baseUrl: 'http://x' });\nvoid c.POST('/api/signup/email/', { body: { e_mail: 'x' } });\nvoid c.GET('/api/no-such-path/');\n`);
    await writeFile(join(dir, 'tsconfig.wrong.json'), JSON.stringify({ ...TSCONFIG, files: ['wrong.ts'] }));
    const compiled = spawnSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.wrong.json')], { encoding: 'utf8' });
    expect(compiled.status).not.toBe(0);
    expect(compiled.stdout).toContain('wrong.ts(4,');
    expect(compiled.stdout).toContain('wrong.ts(5,');
  });
});

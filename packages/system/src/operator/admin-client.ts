/**
 * The operator CLI's way to the admin API: HTTP to `CASTIE_URL` with the bearer token from
 * `ADMIN_TOKEN`. Every failure becomes an OperatorError with one line for a person (never a stack
 * trace for their mistake): no token, server unreachable, refused token, the API's own error.
 */

/** A failure to show as one line, with the process's exit code (2: usage or configuration, 1: the rest). */
export class OperatorError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'OperatorError';
  }
}

export interface AdminClient {
  readonly baseUrl: string;
  get(path: string): Promise<Record<string, unknown>>;
  post(path: string, body?: Record<string, unknown> | FormData): Promise<Record<string, unknown>>;
}

export const DEFAULT_URL = 'http://localhost:8080';

export function adminClient(env: Record<string, string | undefined>, options: { url?: string | undefined; fetch?: typeof fetch } = {}): AdminClient {
  const rawUrl = options.url ?? env.CASTIE_URL ?? DEFAULT_URL;
  let base: URL;
  try {
    base = new URL(rawUrl);
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new OperatorError(`CASTIE_URL must be an http(s) URL such as ${DEFAULT_URL}, not "${rawUrl}"`, 2);
  }
  const token = env.ADMIN_TOKEN?.trim();
  if (!token) throw new OperatorError('ADMIN_TOKEN is not set: export the admin token of the server (npm start prints it when it generates one)', 2);
  const doFetch = options.fetch ?? fetch;
  const baseUrl = base.toString().replace(/\/+$/, '');

  async function call(method: 'GET' | 'POST', path: string, body?: Record<string, unknown> | FormData): Promise<Record<string, unknown>> {
    const url = `${baseUrl}${path}`;
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
    let payload: string | FormData | undefined;
    if (body instanceof FormData) payload = body;
    else if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    let res: Response;
    try {
      res = await doFetch(url, { method, headers, ...(payload === undefined ? {} : { body: payload }) });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (error as Error).message;
      throw new OperatorError(`cannot reach the admin API at ${baseUrl} (${why}): is the server running? set CASTIE_URL to its address`);
    }
    const text = await res.text();
    let json: Record<string, unknown> | null = null;
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) json = parsed as Record<string, unknown>;
    } catch {
      json = null;
    }
    if (res.status === 401) throw new OperatorError(`the admin API at ${baseUrl} refused the token (401): check ADMIN_TOKEN`);
    if (!res.ok) {
      const type = typeof json?.error_type === 'string' ? ` ${json.error_type}` : '';
      const message = typeof json?.error_message === 'string' ? json.error_message : `${method} ${path} failed`;
      throw new OperatorError(`${message} (${res.status}${type})`);
    }
    if (!json) throw new OperatorError(`the server at ${baseUrl} did not answer JSON for ${method} ${path}: is CASTIE_URL the Castie gateway?`);
    return json;
  }

  return { baseUrl, get: (path) => call('GET', path), post: (path, body) => call('POST', path, body) };
}

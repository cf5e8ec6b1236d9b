import { AuthenticatedUserSchema, type AuthenticatedUser } from '@castie/contracts';
import { bodyText, type ServiceClient } from '../routing/service-client.ts';

export interface Presented {
  email: string;
  password: string;
  /** True when they came as `username`/`password` body fields (which are then not forwarded). */
  inBody: boolean;
}

/** Credentials from HTTP Basic, else from `username` and `password` body fields (decisions.md). */
export function presentedCredentials(authorization: string | undefined, body: Record<string, unknown>): Presented | null {
  const basic = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(authorization ?? '');
  if (basic) {
    const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon > 0) return { email: decoded.slice(0, colon), password: decoded.slice(colon + 1), inBody: false };
  }
  const { username, password } = body;
  if (typeof username === 'string' && typeof password === 'string' && username && password) return { email: username, password, inBody: true };
  return null;
}

/** Asks identity (which owns credentials and caches verified ones) who presented them. */
export async function authenticate(identity: ServiceClient, presented: Presented, requestId: string): Promise<AuthenticatedUser | null> {
  const res = await identity.request({ method: 'POST', url: '/internal/authenticate', headers: { 'x-request-id': requestId }, body: { email: presented.email, password: presented.password } });
  if (res.statusCode !== 200) return null;
  const user = AuthenticatedUserSchema.safeParse(JSON.parse(bodyText(res)));
  return user.success ? user.data : null;
}

import { allEndpoints, type Access, type ServiceName } from '@castie/contracts';

/** A public path the gateway forwards: which methods it takes there, and who answers each. */
export interface PublicRoute {
  path: string;
  methods: Map<string, { service: ServiceName; access: Access; uploads: readonly string[] }>;
}

/** Browser pages outside /api/ (password reset); answered as HTML by their service. */
const pages: { path: string; methods: string[]; service: ServiceName }[] = [
  { path: '/password_reset/', methods: ['GET', 'POST'], service: 'identity' },
  { path: '/password_reset/:token/', methods: ['GET', 'POST'], service: 'identity' },
];

/** The routing table, built from the contracts: one entry per path. */
export function publicRoutes(): PublicRoute[] {
  const byPath = new Map<string, PublicRoute>();
  const entry = (path: string) => byPath.get(path) ?? byPath.set(path, { path, methods: new Map() }).get(path)!;
  for (const e of allEndpoints) {
    for (const path of e.paths) entry(path).methods.set(e.method, { service: e.service, access: e.access, uploads: e.uploads ?? [] });
  }
  for (const p of pages) for (const m of p.methods) entry(p.path).methods.set(m, { service: p.service, access: 'none', uploads: [] });
  return [...byPath.values()];
}

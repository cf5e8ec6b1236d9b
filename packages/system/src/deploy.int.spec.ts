import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { allEndpoints, serviceNames } from '@castie/contracts';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { clusterRoles, readClusterConfig } from './cluster-config.ts';

/*
 * What an operator relies on in deploy/ and docker-compose.yml, read from the files themselves:
 * probes, rollout strategy and disruption budgets, pinned images, non-root containers, resources,
 * /admin/ kept off the public Ingress, an image of compiled output only. Where docker compose or
 * kubectl/kustomize are installed, they check the files too; otherwise those tests are skipped
 * with the reason in their name.
 */

const root = fileURLToPath(new URL('../../../', import.meta.url));
const read = (path: string): string => readFileSync(join(root, path), 'utf8');
const k8sDir = 'deploy/k8s';

interface Probe {
  httpGet?: { path?: string; port?: string | number };
}
interface Container {
  name: string;
  image: string;
  args?: string[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; allowPrivilegeEscalation?: boolean };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}
interface PodSpec {
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  containers: Container[];
  initContainers?: Container[];
}
type Labels = Record<string, string>;
interface IngressPath {
  path: string;
  backend: { service: { name: string } };
}
interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Labels; annotations?: Record<string, string> };
  spec?: {
    replicas?: number;
    type?: string;
    strategy?: { type?: string; rollingUpdate?: { maxUnavailable?: number | string } };
    selector?: { matchLabels?: Labels } & Labels;
    minAvailable?: number | string;
    maxUnavailable?: number | string;
    template?: { metadata?: { labels?: Labels }; spec: PodSpec };
    rules?: { http: { paths: IngressPath[] } }[];
  };
}
interface Kustomization {
  resources: string[];
  images?: { name: string; newName?: string; newTag?: string; digest?: string }[];
}

const documentsOf = (text: string): Manifest[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null);

/** The image name without tag or digest, as kustomize's `images:` matches it. */
const imageName = (image: string): string => {
  const noDigest = image.split('@')[0]!;
  const slash = noDigest.lastIndexOf('/');
  const colon = noDigest.lastIndexOf(':');
  return colon > slash ? noDigest.slice(0, colon) : noDigest;
};

const podSpecs = (ms: Manifest[]): { owner: string; pod: PodSpec }[] =>
  ms.flatMap((m) => (m.spec?.template?.spec ? [{ owner: `${m.kind}/${m.metadata.name}`, pod: m.spec.template.spec }] : []));
const containersOf = (pod: PodSpec): Container[] => [...(pod.initContainers ?? []), ...pod.containers];

/** The manifests kustomization.yaml lists, with its `images:` applied the way kustomize does. */
function renderOwn(): Manifest[] {
  const k = parse(read(`${k8sDir}/kustomization.yaml`)) as Kustomization;
  const manifests = k.resources.flatMap((file) => documentsOf(read(`${k8sDir}/${file}`)));
  for (const { pod } of podSpecs(manifests)) {
    for (const c of containersOf(pod)) {
      const rule = k.images?.find((i) => i.name === imageName(c.image));
      if (!rule) continue;
      const tag = rule.newTag ?? (c.image.includes(':') ? c.image.slice(c.image.lastIndexOf(':') + 1) : undefined);
      c.image = `${rule.newName ?? rule.name}${tag ? `:${tag}` : ''}${rule.digest ? `@${rule.digest}` : ''}`;
    }
  }
  return manifests;
}

const deployments = (ms: Manifest[]) => ms.filter((m) => m.kind === 'Deployment');
const selects = (selector: Labels | undefined, labels: Labels | undefined): boolean =>
  !!selector && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels?.[k] === v);

interface LabelSelector {
  matchLabels?: Labels;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}
interface NetworkPolicy {
  metadata: { name: string };
  spec: {
    podSelector: LabelSelector;
    policyTypes?: string[];
    ingress?: { from?: { podSelector?: LabelSelector; namespaceSelector?: LabelSelector; ipBlock?: unknown }[] }[];
  };
}
/** A Kubernetes label selector applied to a pod's labels (an empty selector selects every pod). */
const selectsPod = (selector: LabelSelector | undefined, labels: Labels | undefined): boolean =>
  !!selector &&
  Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels?.[k] === v) &&
  (selector.matchExpressions ?? []).every((e) => {
    const value = labels?.[e.key];
    if (e.operator === 'In') return value !== undefined && (e.values ?? []).includes(value);
    if (e.operator === 'NotIn') return value === undefined || !(e.values ?? []).includes(value);
    return e.operator === 'Exists' ? value !== undefined : value === undefined;
  });

/** Problems with a rendered set of manifests, as sentences; none is what an operator relies on. */
function problems(ms: Manifest[]): string[] {
  const found: string[] = [];
  for (const d of deployments(ms)) {
    for (const c of d.spec!.template!.spec.containers) {
      if (c.livenessProbe?.httpGet?.path !== '/healthz') found.push(`Deployment/${d.metadata.name}: liveness is not GET /healthz`);
      if (c.readinessProbe?.httpGet?.path !== '/readyz') found.push(`Deployment/${d.metadata.name}: readiness is not GET /readyz`);
      if (c.startupProbe && c.startupProbe.httpGet?.path !== '/healthz') found.push(`Deployment/${d.metadata.name}: startup probe is not GET /healthz`);
    }
  }
  for (const { owner, pod } of podSpecs(ms)) {
    if (pod.securityContext?.runAsNonRoot !== true) found.push(`${owner}: runAsNonRoot is not set`);
    if (pod.securityContext?.runAsUser === 0) found.push(`${owner}: runs as uid 0`);
    for (const c of containersOf(pod)) {
      const at = `${owner} container ${c.name}`;
      const [, tag] = /^[^@]*?(?::([^:/@]+))?(?:@sha256:[0-9a-f]{64})?$/.exec(c.image) ?? [];
      if (!c.image.includes('@sha256:') && (!tag || tag === 'latest')) found.push(`${at}: image ${c.image} is not pinned to a tag or digest`);
      if (c.securityContext?.runAsUser === 0) found.push(`${at}: runs as uid 0`);
      if (c.securityContext?.allowPrivilegeEscalation !== false) found.push(`${at}: allows privilege escalation`);
      if (!c.resources?.requests?.cpu || !c.resources.requests.memory) found.push(`${at}: no cpu and memory requests`);
      if (!c.resources?.limits?.memory) found.push(`${at}: no memory limit`);
    }
  }
  return found;
}

/** Paths the gateway answers publicly: the API from the contracts, and its pages outside /api/. */
const publicPrefixes = [...new Set(allEndpoints.flatMap((e) => e.paths).map((p) => `/${p.split('/')[1]}`)), '/media', '/password_reset', '/docs'];
const privatePrefixes = ['/admin', '/metrics', '/healthz', '/readyz'];

describe('deploy/k8s, as kustomization.yaml renders it', () => {
  const manifests = renderOwn();

  it('lists every manifest of deploy/k8s but the Secret template (a new file is not silently left out)', () => {
    const listed = (parse(read(`${k8sDir}/kustomization.yaml`)) as Kustomization).resources;
    const files = readdirSync(join(root, k8sDir)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml' && f !== 'secret.template.yaml');
    expect([...listed].sort()).toEqual(files.sort());
  });

  it('probes every Deployment: alive on /healthz, ready on /readyz; pins every image; runs nothing as root; sets resources', () => {
    expect(deployments(manifests).map((d) => d.metadata.name).sort()).toEqual([...clusterRoles].sort());
    expect(problems(manifests)).toEqual([]);
  });

  it('finds the problems it looks for (a latest tag, a root container, readiness not on /readyz, no resources)', () => {
    const broken = renderOwn();
    const gateway = deployments(broken).find((d) => d.metadata.name === 'gateway')!;
    const c = gateway.spec!.template!.spec.containers[0]!;
    c.image = 'ghcr.io/example/castie:latest';
    c.securityContext = { runAsUser: 0 };
    c.readinessProbe = {};
    delete c.resources;
    expect(problems(broken)).toEqual([
      'Deployment/gateway: readiness is not GET /readyz',
      'Deployment/gateway container gateway: image ghcr.io/example/castie:latest is not pinned to a tag or digest',
      'Deployment/gateway container gateway: runs as uid 0',
      'Deployment/gateway container gateway: allows privilege escalation',
      'Deployment/gateway container gateway: no cpu and memory requests',
      'Deployment/gateway container gateway: no memory limit',
    ]);
  });

  it('rolls the gateway (two replicas or more, never below one ready) and guards it with a PodDisruptionBudget', () => {
    const gateway = deployments(manifests).find((d) => d.metadata.name === 'gateway')!;
    expect(gateway.spec!.replicas).toBeGreaterThanOrEqual(2);
    expect(gateway.spec!.strategy).toMatchObject({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0 } });
    const budget = manifests.find((m) => m.kind === 'PodDisruptionBudget' && selects(m.spec?.selector?.matchLabels, gateway.spec!.template!.metadata?.labels));
    expect(budget?.spec?.minAvailable).toBe(1);
  });

  it('gives every Deployment a PodDisruptionBudget, or runs it as one Recreate replica that says why (deploy/README.md)', () => {
    const readme = read('deploy/README.md');
    for (const d of deployments(manifests)) {
      const labels = d.spec!.template!.metadata?.labels;
      const budget = manifests.find((m) => m.kind === 'PodDisruptionBudget' && selects(m.spec?.selector?.matchLabels, labels));
      if (budget) {
        expect(d.spec!.replicas ?? 1, `${d.metadata.name} has a budget, so more than one replica`).toBeGreaterThan(1);
        continue;
      }
      expect({ name: d.metadata.name, replicas: d.spec!.replicas ?? 1, strategy: d.spec!.strategy?.type }).toEqual({ name: d.metadata.name, replicas: 1, strategy: 'Recreate' });
      expect(d.metadata.annotations?.['castie/single-replica'], `${d.metadata.name} says why it runs one replica`).toMatch(/\w{10}/);
      expect(readme).toContain(`\`${d.metadata.name}\``);
    }
    expect(readme).toMatch(/## What rolls and what recreates/);
  });

  it('routes only the public paths through the Ingress: the API, media, password reset, docs; never /admin/ or /metrics', () => {
    const paths = manifests.filter((m) => m.kind === 'Ingress').flatMap((m) => m.spec!.rules!.flatMap((r) => r.http.paths));
    const routed = paths.map((p) => p.path);
    for (const path of routed) {
      expect(path, 'no catch-all: a path is public only when listed').not.toBe('/');
      for (const hidden of privatePrefixes) expect(path.startsWith(hidden), `${path} is private`).toBe(false);
    }
    for (const prefix of publicPrefixes) expect(routed, `${prefix} reaches the gateway`).toContain(prefix);
    expect(new Set(paths.map((p) => p.backend.service.name))).toEqual(new Set(['gateway']));
  });

  it('lets operators reach /admin/ only inside the cluster: the gateway-admin ClusterIP Service, no Service exposed outside', () => {
    const gatewayPods = deployments(manifests).find((d) => d.metadata.name === 'gateway')!.spec!.template!.metadata?.labels;
    const admin = manifests.find((m) => m.kind === 'Service' && m.metadata.name === 'gateway-admin');
    expect(admin?.spec?.type ?? 'ClusterIP').toBe('ClusterIP');
    expect(selects(admin?.spec?.selector, gatewayPods)).toBe(true);
    const exposed = manifests.filter((m) => m.kind === 'Service' && ['NodePort', 'LoadBalancer'].includes(m.spec?.type ?? 'ClusterIP'));
    expect(exposed.map((m) => m.metadata.name)).toEqual([]);
  });

  it('lets only the gateway (and the metrics scraper) reach the services: they trust its x-castie-* headers, /admin/ included', () => {
    const gatewayPods = deployments(manifests).find((d) => d.metadata.name === 'gateway')!.spec!.template!.metadata?.labels;
    const policies = manifests.filter((m) => m.kind === 'NetworkPolicy') as unknown as NetworkPolicy[];
    for (const d of deployments(manifests).filter((d) => d.metadata.name !== 'gateway')) {
      const pods = d.spec!.template!.metadata?.labels;
      const covering = policies.filter((p) => selectsPod(p.spec.podSelector, pods));
      expect(covering.length, `${d.metadata.name}: no NetworkPolicy selects its pods, so any pod of the cluster may send x-castie-admin`).toBeGreaterThan(0);
      // Policies add up: every peer of every policy that selects the pods must be the gateway or the scraper.
      for (const policy of covering) {
        expect(policy.spec.policyTypes ?? ['Ingress'], policy.metadata.name).toContain('Ingress');
        for (const rule of policy.spec.ingress ?? []) {
          expect(rule.from?.length ?? 0, `${policy.metadata.name}: a rule without from admits everyone`).toBeGreaterThan(0);
          for (const peer of rule.from ?? []) {
            const gateway = !peer.namespaceSelector && !peer.ipBlock && selectsPod(peer.podSelector, gatewayPods);
            const scraper = !peer.ipBlock && !!peer.namespaceSelector && Object.keys(peer.podSelector?.matchLabels ?? {}).length > 0;
            expect(gateway || scraper, `${policy.metadata.name}: ${JSON.stringify(peer)} is neither the gateway's pods nor one namespace's scraper pods`).toBe(true);
          }
        }
      }
    }
    // The gateway itself stays reachable (the Ingress controller, port-forward): nothing selects it here.
    expect(policies.filter((p) => selectsPod(p.spec.podSelector, gatewayPods)).map((p) => p.metadata.name)).toEqual([]);
  });

  it('configures every role so that it starts: the ConfigMap with the Secret template passes the cluster configuration check', () => {
    const config = manifests.find((m) => m.kind === 'ConfigMap' && m.metadata.name === 'castie-config') as unknown as { data: Record<string, string> };
    const secret = parse(read(`${k8sDir}/secret.template.yaml`)) as { stringData: Record<string, string> };
    for (const role of clusterRoles) expect(readClusterConfig(role, { ...config.data, ...secret.stringData }, serviceNames).role).toBe(role);
    for (const d of deployments(manifests)) expect(d.spec!.template!.spec.containers[0]!.args).toEqual([d.metadata.name]);
  });
});

describe('docker-compose.yml', () => {
  it("gives every Castie container an environment its role accepts, with the file's defaults", () => {
    const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, { image?: string; command?: string[]; environment?: Record<string, string> }> };
    const castie = Object.entries(compose.services).filter(([, s]) => s.image === 'castie:local');
    expect(castie.map(([name]) => name).sort()).toEqual([...clusterRoles].sort());
    // Compose interpolation with the defaults this file gives: ${NAME:-default}.
    const interpolate = (value: string): string => value.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1');
    for (const [name, s] of castie) {
      const env = Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, interpolate(String(v))]));
      expect(readClusterConfig(s.command?.[0], env, serviceNames).role).toBe(name);
    }
  });
});

describe('deploy/Dockerfile', () => {
  // Instructions with their continuation lines joined and comments left out.
  const instructions = read('deploy/Dockerfile')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const [keyword = '', ...rest] = line.split(/\s+/);
      return { keyword: keyword.toUpperCase(), args: rest.join(' ') };
    });
  const froms = instructions.flatMap((ins, i) => (ins.keyword === 'FROM' ? [i] : []));
  const finalStage = instructions.slice(froms.at(-1));
  const buildStages = instructions.slice(0, froms.at(-1));
  const exec = (keyword: string): string[] => JSON.parse(finalStage.find((i) => i.keyword === keyword)?.args ?? '[]') as string[];

  it('builds in one stage and ships another, both on a pinned Node 20 base', () => {
    expect(froms.length).toBeGreaterThanOrEqual(2);
    for (const i of froms) expect(instructions[i]!.args).toMatch(/^node:20-bookworm-slim\b/);
  });

  it('runs as a non-root user', () => {
    const user = finalStage.filter((i) => i.keyword === 'USER').at(-1)?.args;
    expect(user).toBeDefined();
    expect(user!.split(':')[0]).not.toMatch(/^(root|0)$/);
  });

  it('checks its health on /healthz', () => {
    expect(finalStage.find((i) => i.keyword === 'HEALTHCHECK')?.args).toMatch(/\/healthz/);
  });

  it('copies only the production deploy output (no sources, no dev dependencies) into the final stage', () => {
    const deploy = buildStages.find((i) => i.keyword === 'RUN' && /\bdeploy --prod\b/.test(i.args));
    const out = /\bdeploy --prod (\S+)/.exec(deploy?.args ?? '')?.[1];
    expect(out, 'the build stage runs pnpm deploy --prod').toBeDefined();
    const copies = finalStage.filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD');
    expect(copies.length).toBeGreaterThan(0);
    for (const copy of copies) {
      expect(copy.args, 'from the build stage').toMatch(/--from=\S+/);
      const sources = copy.args.split(/\s+/).filter((a) => !a.startsWith('--')).slice(0, -1);
      for (const source of sources) expect(source.startsWith(`${out}/`), `${source} comes from ${out}`).toBe(true);
    }
  });

  it('starts plain node on the compiled output (no tsx, no TypeScript)', () => {
    const command = [...exec('ENTRYPOINT'), ...exec('CMD')];
    expect(command[0]).toBe('node');
    expect(command.some((arg) => /^dist\/.+\.js$/.test(arg))).toBe(true);
    expect(finalStage.map((i) => i.args).join('\n')).not.toMatch(/tsx|\.ts\b|--import/);
  });

  it('leaves local node_modules out of the build context', () => {
    expect(read('deploy/Dockerfile.dockerignore').split('\n')).toContain('**/node_modules');
  });
});

/** The first of the given commands that runs (`version` answers), as argv without the check. */
function firstTool(candidates: { run: string[]; check: string[] }[]): string[] | null {
  for (const c of candidates) {
    const res = spawnSync(c.check[0]!, c.check.slice(1), { stdio: 'ignore', timeout: 20_000 });
    if (res.status === 0) return c.run;
  }
  return null;
}

const compose = firstTool([
  { run: ['docker', 'compose'], check: ['docker', 'compose', 'version'] },
  { run: ['docker-compose'], check: ['docker-compose', 'version'] },
]);
const kustomize = firstTool([
  { run: ['kubectl', 'kustomize'], check: ['kubectl', 'version', '--client'] },
  { run: ['kustomize', 'build'], check: ['kustomize', 'version'] },
]);

const runTool = (argv: string[], args: string[]) => spawnSync(argv[0]!, [...argv.slice(1), ...args], { cwd: root, encoding: 'utf8', timeout: 60_000 });

describe('the real tools, where installed', () => {
  it.skipIf(!compose)(compose ? `${compose.join(' ')} config -q accepts docker-compose.yml` : 'docker-compose.yml through docker compose config (skipped: docker compose not installed)', () => {
    const res = runTool(compose!, ['-f', 'docker-compose.yml', 'config', '-q']);
    expect(res.stderr).toBe('');
    expect(res.status).toBe(0);
  });

  it.skipIf(!kustomize)(
    kustomize ? `${kustomize.join(' ')} renders deploy/k8s with pinned images and no problem` : 'deploy/k8s through kustomize (skipped: neither kubectl nor kustomize installed)',
    () => {
      const res = runTool(kustomize!, [k8sDir]);
      expect(res.stderr).toBe('');
      expect(res.status).toBe(0);
      const rendered = documentsOf(res.stdout);
      expect(problems(rendered)).toEqual([]);
      const images = (ms: Manifest[]) => podSpecs(ms).flatMap(({ owner, pod }) => containersOf(pod).map((c) => `${owner}: ${c.image}`)).sort();
      expect(images(rendered)).toEqual(images(renderOwn()));
    },
  );
});

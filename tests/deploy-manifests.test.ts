// The deployment files in deploy/ against the code: every manifest parses; every env variable a
// process reads (its TypeBox env schema) that has no default — or whose default only works on a
// developer machine (loopback addresses) — is set by compose and by Kubernetes; ports agree; the
// probes point at paths the running processes really answer; autoscaling and graceful shutdown
// are configured. Kubernetes config is resolved like kustomize does: env, envFrom and the
// config/secret generators of the base plus the example overlay.
import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type ProcessName, processNames, repoRoot } from '@crm/stack';
import { sharedStack } from '@crm/testing';
import type { TObject } from '@sinclair/typebox';
import { parseAllDocuments } from 'yaml';
import { CatalogEnv } from '../services/catalog/src/config.ts';
import { DocumentsEnv } from '../services/documents/src/config.ts';
import { GatewayEnv } from '../services/gateway/src/config.ts';
import { SalesEnv } from '../services/sales/src/config.ts';
import { WebhooksEnv } from '../services/webhooks/src/config.ts';

const deployDir = join(repoRoot, 'deploy');
const schemas: Record<ProcessName, TObject> = {
  gateway: GatewayEnv,
  sales: SalesEnv,
  catalog: CatalogEnv,
  documents: DocumentsEnv,
  webhooks: WebhooksEnv,
};
const portVar = (name: ProcessName) => `${name.toUpperCase()}_PORT`;

/**
 * Variables a container must set: no default, a default that points at loopback (only right on a
 * developer machine), or a credential (a default credential is never right in a deployment).
 */
function mustSet(schema: TObject): string[] {
  const required = new Set(schema.required ?? []);
  const credential = /(SECRET|ACCESS_KEY|TOKEN|PASSWORD)/;
  return Object.entries(schema.properties)
    .filter(([key, s]) => required.has(key) && (s.default === undefined || String(s.default).includes('127.0.0.1') || credential.test(key)))
    .map(([key]) => key);
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const path = join(dir, f);
    return statSync(path).isDirectory() ? yamlFiles(path) : /\.ya?ml$/.test(f) ? [path] : [];
  });
}

function load(path: string): any[] {
  return parseAllDocuments(readFileSync(path, 'utf8'), { merge: true }).map((d) => {
    if (d.errors.length > 0) throw new Error(`${path}: ${d.errors.map((e) => e.message).join('; ')}`);
    return d.toJS({});
  });
}

const defaultPort = (name: ProcessName) => Number(schemas[name].properties[portVar(name)]!.default);

/** Kubernetes objects of base + example overlay, and the keys of the generated ConfigMaps/Secrets. */
function kustomize() {
  const objects: any[] = [];
  const configKeys = new Map<string, Map<string, string>>();
  for (const dir of ['k8s/base', 'k8s/overlays/example']) {
    const [k] = load(join(deployDir, dir, 'kustomization.yaml'));
    for (const r of k.resources ?? []) if (!r.startsWith('..')) objects.push(...load(join(deployDir, dir, r)));
    for (const gen of [...(k.configMapGenerator ?? []), ...(k.secretGenerator ?? [])]) {
      const keys = configKeys.get(gen.name) ?? new Map<string, string>();
      for (const literal of gen.literals ?? []) keys.set(literal.split('=')[0], literal.slice(literal.indexOf('=') + 1));
      configKeys.set(gen.name, keys);
    }
  }
  return { objects, configKeys };
}

describe('manifests parse', () => {
  test('every YAML file under deploy/ is valid YAML', () => {
    const files = yamlFiles(deployDir);
    expect(files.length).toBeGreaterThanOrEqual(12);
    for (const file of files) expect(() => load(file)).not.toThrow();
  });
});

describe('docker compose', () => {
  const [compose] = load(join(deployDir, 'compose.yaml'));

  test('runs PostgreSQL, NATS with JetStream and MinIO', () => {
    expect(compose.services.postgres.image).toMatch(/^postgres:/);
    expect(compose.services.nats.command).toContain('-js');
    expect(compose.services.minio.image).toMatch(/^minio\/minio:/);
  });

  for (const name of processNames) {
    test(`${name}: every variable it must have is set, port and health check agree`, () => {
      const svc = compose.services[name];
      const env = svc.environment as Record<string, string>;
      expect(Object.keys(env)).toEqual(expect.arrayContaining(mustSet(schemas[name])));
      expect(Number(env[portVar(name)])).toBe(defaultPort(name));
      expect(JSON.stringify(svc.healthcheck.test)).toContain(`127.0.0.1:${defaultPort(name)}/readyz`);
      expect(svc.build.dockerfile).toBe(`deploy/docker/${name}.Dockerfile`);
    });
  }
});

describe('Dockerfiles', () => {
  for (const name of processNames) {
    test(`${name}: Bun base image, non-root, runs services/${name}/src/main.ts`, () => {
      const text = readFileSync(join(deployDir, 'docker', `${name}.Dockerfile`), 'utf8');
      const froms = [...text.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
      expect(froms.at(-1)).toMatch(/^oven\/bun:\d/);
      expect(text).toMatch(/^USER (?!root)\S+/m);
      expect(text).toContain(`CMD ["bun", "services/${name}/src/main.ts"]`);
      expect(text).toMatch(new RegExp(`^EXPOSE ${defaultPort(name)}$`, 'm'));
      expect(text).toContain('HOST=0.0.0.0');
    });
  }
});

describe('kubernetes (base + example overlay)', () => {
  const { objects, configKeys } = kustomize();
  const of = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);

  for (const name of processNames) {
    test(`${name}: every variable it must have is set through env, ConfigMap or Secret`, () => {
      const container = of('Deployment', name).spec.template.spec.containers[0];
      const set = new Set<string>();
      for (const e of container.env ?? []) {
        const ref = e.valueFrom?.secretKeyRef ?? e.valueFrom?.configMapKeyRef;
        if (ref) expect(configKeys.get(ref.name)?.has(ref.key)).toBe(true);
        set.add(e.name);
      }
      for (const from of container.envFrom ?? []) {
        const ref = from.configMapRef ?? from.secretRef;
        for (const key of configKeys.get(ref.name)?.keys() ?? []) set.add(key);
      }
      expect([...set]).toEqual(expect.arrayContaining(mustSet(schemas[name])));
      const port = container.env.find((e: any) => e.name === portVar(name))?.value;
      expect(Number(port)).toBe(container.ports[0].containerPort);
    });

    test(`${name}: probes, resources, graceful shutdown, Service and HPA`, () => {
      const pod = of('Deployment', name).spec.template.spec;
      const container = pod.containers[0];
      expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
      expect(container.livenessProbe.httpGet).toEqual({ path: '/livez', port: 'http' });
      expect(container.ports[0].name).toBe('http');
      expect(container.resources.requests.cpu).toBeTruthy();
      expect(container.resources.requests.memory).toBeTruthy();
      expect(container.lifecycle.preStop).toBeTruthy();
      // preStop (5 s) + the process's own drain (≤ 10 s, contract §18) must fit in the grace period.
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(15);
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      const service = of('Service', name);
      expect(service.spec.selector).toEqual(of('Deployment', name).spec.selector.matchLabels);
      expect(service.spec.ports[0].port).toBe(container.ports[0].containerPort);
      const hpa = of('HorizontalPodAutoscaler', name);
      expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name });
      expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    });
  }

  test('service URLs in the ConfigMap point at existing Services and their ports', () => {
    const config = configKeys.get('crm-config')!;
    for (const key of ['SALES_URL', 'CATALOG_URL', 'DOCUMENTS_URL', 'WEBHOOKS_URL']) {
      const url = new URL(config.get(key)!);
      expect(of('Service', url.hostname)?.spec.ports[0].port).toBe(Number(url.port));
    }
  });

  test('Helm values: JetStream on, the crm database, the documents bucket', () => {
    const [nats] = load(join(deployDir, 'k8s/helm-values/nats.yaml'));
    const [postgres] = load(join(deployDir, 'k8s/helm-values/postgresql.yaml'));
    const [minio] = load(join(deployDir, 'k8s/helm-values/minio.yaml'));
    expect(nats.config.jetstream.enabled).toBe(true);
    expect(new URL(configKeys.get('crm-database')!.get('DATABASE_URL')!).pathname).toBe(`/${postgres.auth.database}`);
    expect(minio.buckets.map((b: any) => b.name)).toContain(configKeys.get('crm-config')!.get('S3_BUCKET'));
  });
});

describe('probe paths exist on the running processes', () => {
  const { objects } = kustomize();
  const probes = new Set<string>();
  for (const d of objects.filter((o) => o.kind === 'Deployment')) {
    const c = d.spec.template.spec.containers[0];
    for (const p of [c.readinessProbe, c.livenessProbe, c.startupProbe]) if (p) probes.add(`${d.metadata.name} ${p.httpGet.path}`);
  }

  test('every probe of every Deployment answers 200 without credentials', async () => {
    const stack = await sharedStack();
    expect(probes.size).toBe(processNames.length * 2);
    for (const probe of probes) {
      const [name, path] = probe.split(' ') as [ProcessName, string];
      const response = await stack.call(name, 'GET', path);
      expect({ probe, status: response.status }).toEqual({ probe, status: 200 });
    }
  }, 120_000);
});

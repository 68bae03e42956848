// The deployment files in deploy/ against the code: every manifest parses; every env variable a
// process reads (its TypeBox env schema) that has no default — or whose default only works on a
// developer machine (loopback addresses) — is set by compose and by Kubernetes; ports agree; the
// probes point at paths the running processes really answer; autoscaling and graceful shutdown
// are configured. Kubernetes config is resolved like kustomize does: env, envFrom and the
// config/secret generators of the base plus the example overlay.
import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type ProcessName, processNames, RUNTIME_ENV, repoRoot, runtimeEnv } from '@crm/stack';
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
/** The gateway's operations port (/metrics and probes, contract §20). */
const opsPort = Number(GatewayEnv.properties.GATEWAY_OPS_PORT!.default);
/** Secrets created once at install with random values instead of by kustomize (deploy/README.md). */
const installSecrets: Record<string, string[]> = { 'crm-minio': ['rootUser', 'rootPassword'] };

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
  const credentials = compose.services['minio-credentials'];
  const generatorScript: string = credentials.command.join(' ');
  /** The variables the generated credentials file defines (the generator's printf format). */
  const generated = [...generatorScript.matchAll(/(S3_[A-Z_]+)=%s/g)].map((m) => m[1] as string);
  const sourcesCredentials = (svc: any) => JSON.stringify([svc.entrypoint, svc.command]).includes('. /credentials/s3.env');

  test('runs PostgreSQL, NATS with JetStream and MinIO', () => {
    expect(compose.services.postgres.image).toMatch(/^postgres:/);
    expect(compose.services.nats.command).toContain('-js');
    expect(compose.services.minio.image).toMatch(/^minio\/minio:/);
  });

  test('MinIO runs with credentials generated on the first start, never a default one', () => {
    expect(generated).toEqual(['S3_ACCESS_KEY', 'S3_SECRET_KEY']);
    expect(generatorScript).toContain('/dev/urandom');
    const minio = compose.services.minio;
    expect(minio.depends_on['minio-credentials']).toEqual({ condition: 'service_completed_successfully' });
    expect(sourcesCredentials(minio)).toBe(true);
    // `$$` is compose's escape of `$`: the shell expands the variables the credentials file set.
    expect(minio.entrypoint.join(' ')).toContain('MINIO_ROOT_USER="$$S3_ACCESS_KEY" MINIO_ROOT_PASSWORD="$$S3_SECRET_KEY"');
    expect(minio.environment?.MINIO_ROOT_USER).toBeUndefined();
    for (const svc of Object.values<any>(compose.services))
      expect(JSON.stringify(svc.environment ?? {})).not.toMatch(/S3_(ACCESS|SECRET)_KEY/);
  });

  for (const name of processNames) {
    test(`${name}: every variable it must have is set, port and health check agree`, () => {
      const svc = compose.services[name];
      const env = svc.environment as Record<string, string>;
      const set = [...Object.keys(env), ...(sourcesCredentials(svc) ? generated : [])];
      expect(set).toEqual(expect.arrayContaining(mustSet(schemas[name])));
      expect(Number(env[portVar(name)])).toBe(defaultPort(name));
      const probePort = name === 'gateway' ? opsPort : defaultPort(name);
      expect(JSON.stringify(svc.healthcheck.test)).toContain(`127.0.0.1:${probePort}/readyz`);
      // One Dockerfile for every process: the process and its ports are build arguments.
      expect(svc.build.dockerfile).toBe('deploy/docker/Dockerfile');
      expect(svc.build.args).toEqual({
        SERVICE: name,
        PORT: String(defaultPort(name)),
        ...(name === 'gateway' ? { HEALTH_PORT: String(opsPort) } : {}),
      });
    });
  }

  test('gateway: the operations port is set but not published on the host', () => {
    const gateway = compose.services.gateway;
    expect(Number(gateway.environment.GATEWAY_OPS_PORT)).toBe(opsPort);
    expect(gateway.ports).toEqual([`${defaultPort('gateway')}:${defaultPort('gateway')}`]);
    for (const [name, svc] of Object.entries<any>(compose.services)) if (name !== 'gateway') expect(svc.ports).toBeUndefined();
  });
});

test('no file under deploy/ mentions the default MinIO credentials', () => {
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : [join(dir, f)]));
  for (const file of files(deployDir))
    expect({ file, minioadmin: readFileSync(file, 'utf8').includes('minioadmin') }).toEqual({ file, minioadmin: false });
});

describe('the Dockerfile', () => {
  /** A build argument as the Dockerfile writes it: `${NAME}`. */
  const arg = (name: string) => `$\{${name}}`;
  const text = readFileSync(join(deployDir, 'docker', 'Dockerfile'), 'utf8');
  const [compose] = load(join(deployDir, 'compose.yaml'));
  /** The Dockerfile as built for one process: its build arguments substituted (compose's args, then ARG defaults). */
  function builtFor(name: ProcessName): string {
    const args: Record<string, string> = { ...compose.services[name].build.args };
    for (const m of text.matchAll(/^ARG (\w+)=(.*)$/gm)) args[m[1]!] ??= m[2]!.replace(/\$\{(\w+)\}/g, (_, v) => args[v] ?? '');
    return text.replace(/\$\{(\w+)\}/g, (whole, v) => args[v] ?? whole);
  }

  test('is the only one: every process is built from it', () => {
    const dockerfiles = readdirSync(join(deployDir, 'docker')).filter((f) => /Dockerfile$/.test(f));
    expect(dockerfiles).toEqual(['Dockerfile']);
  });

  test('Bun base image, non-root, the process and its port as build arguments checked before anything is installed', () => {
    const froms = [...text.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(froms.at(-1)).toMatch(/^oven\/bun:\d/);
    expect(text).toMatch(/^USER (?!root)\S+/m);
    const [deps, runtime] = text.split(/^FROM oven\/bun/m) as [string, string];
    for (const stage of [deps, runtime]) for (const arg of ['SERVICE', 'PORT']) expect(stage).toMatch(new RegExp(`^ARG ${arg}$`, 'm'));
    const service = arg('SERVICE');
    expect(deps.indexOf(`test -f "services/${service}/src/main.ts" && test -n "${arg('PORT')}"`)).toBeLessThan(deps.indexOf('RUN npm ci'));
    expect(runtime).toContain(`COPY --from=deps /app/services/${service} ./services/${service}`);
    expect(runtime).not.toMatch(/COPY --from=deps \/app\/services \./);
    expect(text).toContain('HOST=0.0.0.0');
  });

  test("the stack's runtime settings (RUNTIME_ENV) are the image's, each process's differences (PROCESS_RUNTIME_ENV) its manifests', and every local process starts with its own", async () => {
    expect(Object.keys(RUNTIME_ENV)).toContain('MIMALLOC_PURGE_DELAY');
    for (const [name, value] of Object.entries(RUNTIME_ENV)) expect(text).toMatch(new RegExp(`^\\s+${name}=${value} \\\\$`, 'm'));
    const k8s = kustomize().objects;
    for (const name of processNames) {
      // What the container ends up with: the image's value, unless compose or Kubernetes sets another.
      const k8sEnv = k8s.find((o) => o.kind === 'Deployment' && o.metadata.name === name).spec.template.spec.containers[0].env;
      for (const [key, value] of Object.entries(runtimeEnv(name))) {
        const composed = compose.services[name].environment?.[key] ?? RUNTIME_ENV[key];
        const deployed = k8sEnv.find((e: { name: string }) => e.name === key)?.value ?? RUNTIME_ENV[key];
        expect({ name, key, composed, deployed }).toEqual({ name, key, composed: value, deployed: value });
      }
    }
    const stack = await sharedStack();
    for (const name of processNames) {
      const environ = readFileSync(`/proc/${stack.processes[name].child.pid}/environ`, 'utf8').split('\0');
      for (const [key, value] of Object.entries(runtimeEnv(name)))
        expect({ name, key, set: environ.includes(`${key}=${value}`) }).toEqual({ name, key, set: true });
    }
  }, 120_000);

  for (const name of processNames) {
    test(`${name}: runs services/${name}/src/main.ts, exposes its port, health check on ${name === 'gateway' ? 'the operations port' : 'its port'}`, () => {
      const built = builtFor(name);
      expect(built).toMatch(new RegExp(`^WORKDIR /app/services/${name}$`, 'm'));
      expect(built).toContain('CMD ["bun", "src/main.ts"]');
      expect(statSync(join(repoRoot, 'services', name, 'src', 'main.ts')).isFile()).toBe(true);
      expect(built).toMatch(new RegExp(`^EXPOSE ${defaultPort(name)}$`, 'm'));
      const healthPort = name === 'gateway' ? opsPort : defaultPort(name);
      expect(built).toMatch(new RegExp(`^EXPOSE ${healthPort}$`, 'm'));
      expect(built).toContain(`HEALTHCHECK_URL=http://127.0.0.1:${healthPort}/livez`);
      expect(built).toContain('fetch(process.env.HEALTHCHECK_URL)');
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
        if (ref)
          expect({ ref, known: configKeys.get(ref.name)?.has(ref.key) || installSecrets[ref.name]?.includes(ref.key) }).toEqual({
            ref,
            known: true,
          });
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
      // The gateway is probed on its operations port (contract §20), the services on their only port.
      const probePort = name === 'gateway' ? 'ops' : 'http';
      expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: probePort });
      expect(container.livenessProbe.httpGet).toEqual({ path: '/livez', port: probePort });
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

  test('gateway: the operations port is a named container port, scraped on the pods, absent from Service and Ingress', () => {
    const deployment = of('Deployment', 'gateway');
    const container = deployment.spec.template.spec.containers[0];
    const ops = container.ports.find((p: any) => p.name === 'ops');
    expect(ops.containerPort).toBe(opsPort);
    expect(Number(container.env.find((e: any) => e.name === 'GATEWAY_OPS_PORT')?.value)).toBe(opsPort);
    expect(deployment.spec.template.metadata.annotations).toEqual({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': String(opsPort),
      'prometheus.io/path': '/metrics',
    });
    const service = of('Service', 'gateway');
    expect(service.spec.ports.map((p: any) => [p.port, p.targetPort])).toEqual([[defaultPort('gateway'), 'http']]);
    const ingress = objects.find((o) => o.kind === 'Ingress');
    for (const rule of ingress.spec.rules)
      for (const path of rule.http.paths) expect(path.backend.service).toEqual({ name: 'gateway', port: { name: 'http' } });
    const policy = of('NetworkPolicy', 'gateway');
    const opsRule = policy.spec.ingress.find((r: any) => r.ports.some((p: any) => p.port === 'ops'));
    expect(opsRule.from).toBeDefined(); // only from the monitoring namespace, never from everywhere
  });

  test('MinIO credentials: one Secret, generated at install, read by the MinIO chart and documents', () => {
    const [minio] = load(join(deployDir, 'k8s/helm-values/minio.yaml'));
    expect(minio.existingSecret).toBe('crm-minio');
    expect(minio.rootUser).toBeUndefined();
    expect(minio.rootPassword).toBeUndefined();
    const env = of('Deployment', 'documents').spec.template.spec.containers[0].env;
    const ref = (name: string) => env.find((e: any) => e.name === name).valueFrom.secretKeyRef;
    expect(ref('S3_ACCESS_KEY')).toEqual({ name: 'crm-minio', key: 'rootUser' });
    expect(ref('S3_SECRET_KEY')).toEqual({ name: 'crm-minio', key: 'rootPassword' });
    expect(configKeys.has('crm-minio')).toBe(false); // no placeholder copy in the overlay
    expect(readFileSync(join(deployDir, 'README.md'), 'utf8')).toContain('openssl rand');
  });

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
    for (const p of [c.readinessProbe, c.livenessProbe, c.startupProbe])
      if (p) probes.add(`${d.metadata.name} ${p.httpGet.port} ${p.httpGet.path}`);
  }

  test('every probe of every Deployment answers 200 without credentials, on the port it names', async () => {
    const stack = await sharedStack();
    expect(probes.size).toBe(processNames.length * 2);
    for (const probe of probes) {
      const [name, port, path] = probe.split(' ') as [ProcessName, string, string];
      const base = port === 'ops' ? stack.gatewayOpsUrl : stack.processes[name].url;
      const response = await fetch(base + path);
      expect({ probe, status: response.status }).toEqual({ probe, status: 200 });
    }
    // Scraping: /metrics answers on the gateway's operations port, not on its public port.
    expect((await fetch(`${stack.gatewayOpsUrl}/metrics`)).status).toBe(200);
    expect((await fetch(`${stack.gatewayUrl}/metrics`)).status).toBe(404);
  }, 120_000);
});

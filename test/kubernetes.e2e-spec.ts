import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import * as ts from 'typescript';
import { parseAllDocuments } from 'yaml';
import { Deployment, IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import { IJob, Job } from 'kubernetes-models/batch/v1/Job';
import {
  HorizontalPodAutoscaler,
  IHorizontalPodAutoscaler,
} from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import {
  IPodDisruptionBudget,
  PodDisruptionBudget,
} from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap, IConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { ISecret, Secret } from 'kubernetes-models/v1/Secret';
import { IService, Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { ENV_VARIABLES } from '../src/config/env.schema';
import { ConfigError, loadConfig } from '../src/config/load-config';

/**
 * The Kubernetes manifests (deploy/kubernetes): the base and the example overlay are rendered with
 * `kubectl kustomize` (no cluster needed), every object is validated offline against the Kubernetes
 * schemas of kubernetes-models (types and required fields) and, through the TypeScript compiler, against
 * its interfaces (no field outside the schema: a misspelled field would otherwise be ignored by the API
 * server), and the deployment rules of the issue are checked on the rendered objects.
 */

const ROOT = resolve(__dirname, '..');
const KUSTOMIZE_DIRS = [
  'deploy/kubernetes/base',
  'deploy/kubernetes/overlays/example',
] as const;

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

interface ModelClass {
  apiVersion: string;
  kind: string;
  new (data: never): { validate(): void };
}

/** Every kind the manifests may contain, with the module declaring its model and `I<Kind>` interface. */
const MODELS: { model: ModelClass; module: string }[] = [
  { model: Namespace, module: 'kubernetes-models/v1/Namespace' },
  { model: ServiceAccount, module: 'kubernetes-models/v1/ServiceAccount' },
  { model: ConfigMap, module: 'kubernetes-models/v1/ConfigMap' },
  { model: Secret, module: 'kubernetes-models/v1/Secret' },
  { model: Service, module: 'kubernetes-models/v1/Service' },
  { model: Deployment, module: 'kubernetes-models/apps/v1/Deployment' },
  { model: Job, module: 'kubernetes-models/batch/v1/Job' },
  {
    model: HorizontalPodAutoscaler,
    module: 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler',
  },
  {
    model: PodDisruptionBudget,
    module: 'kubernetes-models/policy/v1/PodDisruptionBudget',
  },
];
const MODEL_BY_TYPE = new Map(
  MODELS.map((entry) => [
    `${entry.model.apiVersion}/${entry.model.kind}`,
    entry,
  ]),
);

function modelOf(object: K8sObject): { model: ModelClass; module: string } {
  const entry = MODEL_BY_TYPE.get(`${object.apiVersion}/${object.kind}`);
  if (!entry)
    throw new Error(
      `unknown kind ${object.kind} (${object.apiVersion}) of ${object.metadata?.name}: add its model to MODELS so it is validated`,
    );
  return entry;
}

/**
 * Throws when the object does not match its Kubernetes schema (or its kind is not known here). kustomize
 * wraps long base64 values of a Secret's data over several lines, which the API server's decoder (Go's
 * encoding/base64) ignores but the schema's "byte" format does not: they are joined first.
 */
function validateObject(object: K8sObject): void {
  const { model } = modelOf(object);
  const data =
    object.kind === 'Secret'
      ? (object.data as Record<string, string> | undefined)
      : undefined;
  const asRead = data
    ? {
        ...object,
        data: Object.fromEntries(
          Object.entries(data).map(([key, value]) => [
            key,
            value.replace(/[\r\n]/g, ''),
          ]),
        ),
      }
    : object;
  new model(asRead as never).validate();
}

/**
 * Type-checks each object as an object literal of its kind's interface: TypeScript's excess-property check
 * reports every field the schema does not have (the JSON-schema validation lets unknown fields pass).
 */
function fieldProblems(objects: K8sObject[]): string[] {
  const sources = new Map(
    objects.map((object, index) => [
      resolve(ROOT, 'test', `__rendered_manifest_${index}__.ts`),
      `import type { I${object.kind} as Kind } from '${modelOf(object).module}';\nexport const object: Kind = ${JSON.stringify(object, null, 2)};\n`,
    ]),
  );
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const readFile = host.readFile.bind(host);
  host.fileExists = (file) => sources.has(resolve(file)) || fileExists(file);
  host.readFile = (file) => sources.get(resolve(file)) ?? readFile(file);
  host.getSourceFile = (file, language, ...rest) => {
    const text = sources.get(resolve(file));
    return text === undefined
      ? getSourceFile(file, language, ...rest)
      : ts.createSourceFile(file, text, language);
  };
  const program = ts.createProgram([...sources.keys()], options, host);
  return [...sources.keys()].flatMap((file, index) =>
    ts
      .getPreEmitDiagnostics(program, program.getSourceFile(file))
      .map(
        (diagnostic) =>
          `${objects[index].kind}/${objects[index].metadata.name}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`,
      ),
  );
}

function render(dir: string): K8sObject[] {
  // Found or installed by global-setup (run-tools.ts) for runs that include this suite.
  const kubectl = process.env.TEST_KUBECTL_PATH;
  if (!kubectl)
    throw new Error(
      'TEST_KUBECTL_PATH is not set: run the tests through jest (global-setup finds kubectl)',
    );
  let output: string;
  try {
    output = execFileSync(kubectl, ['kustomize', resolve(ROOT, dir)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    const failure = error as NodeJS.ErrnoException & { stderr?: string };
    throw new Error(
      `kubectl kustomize ${dir} failed: ${failure.stderr ?? failure.message}`,
      { cause: error },
    );
  }
  return parseAllDocuments(output).map((document) => {
    if (document.errors.length > 0)
      throw new Error(
        `kubectl kustomize ${dir}: ${document.errors.map((e) => e.message).join('; ')}`,
      );
    return document.toJS() as K8sObject;
  });
}

function only<T>(objects: K8sObject[], kind: string): T & K8sObject {
  const found = objects.filter((object) => object.kind === kind);
  expect(found.map((object) => object.metadata.name)).toHaveLength(1);
  return found[0] as unknown as T & K8sObject;
}

/** Whether a label selector (matchLabels, or a Service's plain map) selects these labels. */
function selects(
  selector: Record<string, string> | undefined,
  labels: Record<string, string> | undefined,
): boolean {
  const entries = Object.entries(selector ?? {});
  return (
    entries.length > 0 &&
    entries.every(([key, value]) => labels?.[key] === value)
  );
}

/** Every variable named in .env.example, set (`NAME=...`) or commented out (`# NAME=...`). */
function envExampleNames(): string[] {
  const names = readFileSync(resolve(ROOT, '.env.example'), 'utf8')
    .split('\n')
    .map((line) => /^#?\s*([A-Z][A-Z0-9_]*)=/.exec(line.trim())?.[1])
    .filter((name): name is string => name !== undefined);
  return [...new Set(names)];
}

/** The environment of the API container: ConfigMap, then Secret (envFrom, later wins), then its own env. */
function podEnvironment(objects: K8sObject[]): Record<string, string> {
  const container = only<IDeployment>(objects, 'Deployment').spec!.template
    .spec!.containers[0];
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    const found = objects.find(
      (o) =>
        o.metadata.name === (source.configMapRef ?? source.secretRef)?.name &&
        o.kind === (source.configMapRef ? 'ConfigMap' : 'Secret'),
    );
    if (!found)
      throw new Error(
        `envFrom names ${JSON.stringify(source)}, which is not rendered`,
      );
    const data = (found.data ?? {}) as Record<string, string>;
    for (const [key, value] of Object.entries(data))
      env[key] =
        found.kind === 'Secret'
          ? Buffer.from(value, 'base64').toString('utf8')
          : value;
  }
  for (const variable of container.env ?? [])
    env[variable.name] = variable.value ?? '';
  return env;
}

const SECRET_NAME =
  /SECRET|PEPPER|ENCRYPTION_KEY|API_KEY|ACCESS_KEY|^DATABASE_URL$|^REDIS_URL$|^SMTP_URL$/;

describe('Kubernetes manifests', () => {
  const rendered = new Map<string, K8sObject[]>();
  beforeAll(() => {
    for (const dir of KUSTOMIZE_DIRS) rendered.set(dir, render(dir));
  });

  describe.each(KUSTOMIZE_DIRS)('%s', (dir) => {
    let objects: K8sObject[];
    let deployment: IDeployment & K8sObject;
    let job: IJob & K8sObject;
    let config: Record<string, string>;
    let secrets: Record<string, string>;
    beforeAll(() => {
      objects = rendered.get(dir)!;
      deployment = only<IDeployment>(objects, 'Deployment');
      job = only<IJob>(objects, 'Job');
      config = only<IConfigMap>(objects, 'ConfigMap').data ?? {};
      const secret = only<ISecret>(objects, 'Secret');
      secrets = Object.fromEntries(
        Object.entries(secret.data ?? {}).map(([key, value]) => [
          key,
          Buffer.from(value, 'base64').toString('utf8'),
        ]),
      );
      for (const [key, value] of Object.entries(secret.stringData ?? {}))
        secrets[key] = value;
    });
    const podSpec = () => deployment.spec!.template.spec!;
    const api = () => podSpec().containers[0];

    it('renders only kinds known here, each valid against its Kubernetes schema', () => {
      expect(objects.map((object) => object.kind).sort()).toEqual(
        expect.arrayContaining([
          'ConfigMap',
          'Deployment',
          'HorizontalPodAutoscaler',
          'Job',
          'PodDisruptionBudget',
          'Secret',
          'Service',
          'ServiceAccount',
        ]),
      );
      const problems: string[] = [];
      for (const object of objects) {
        try {
          validateObject(object);
        } catch (error) {
          problems.push(
            `${object.kind}/${object.metadata?.name}: ${(error as Error).message}`,
          );
        }
      }
      expect(problems).toEqual([]);
    });

    it('has no field outside the Kubernetes schemas', () => {
      expect(fieldProblems(objects)).toEqual([]);
    }, 60_000);

    it('labels every object (and the pod templates) app.kubernetes.io/name=chat-api', () => {
      for (const object of objects.filter((o) => o.kind !== 'Namespace'))
        expect([
          object.kind,
          object.metadata.labels?.['app.kubernetes.io/name'],
        ]).toEqual([object.kind, 'chat-api']);
      expect(deployment.spec!.template.metadata!.labels).toEqual(
        expect.objectContaining({
          'app.kubernetes.io/name': 'chat-api',
          'app.kubernetes.io/part-of': 'chat-backend',
        }),
      );
      expect(job.spec!.template.metadata!.labels).toEqual(
        expect.objectContaining({ 'app.kubernetes.io/name': 'chat-api' }),
      );
    });

    it('runs at least two replicas of the image, node dist/main.js on port 3000, with MIGRATE_AT_START=false', () => {
      expect(deployment.spec!.replicas).toBeGreaterThanOrEqual(2);
      expect(deployment.spec!.selector.matchLabels).toBeDefined();
      expect(
        selects(
          deployment.spec!.selector.matchLabels,
          deployment.spec!.template.metadata!.labels,
        ),
      ).toBe(true);
      expect(podSpec().containers).toHaveLength(1);
      expect(api().command).toEqual(['node', 'dist/main.js']);
      expect(api().ports).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            name: 'http',
            containerPort: Number(config.PORT),
          }),
        ]),
      );
      expect(Number(config.PORT)).toBe(3000);
      expect(config.NODE_ENV).toBe('production');
      expect(api().env).toEqual(
        expect.arrayContaining([{ name: 'MIGRATE_AT_START', value: 'false' }]),
      );
      expect(config.MIGRATE_AT_START).toBe('false');
    });

    it('probes start-up and liveness on /v1/health/live and readiness on /v1/health/ready', () => {
      const { startupProbe, livenessProbe, readinessProbe } = api();
      expect(startupProbe?.httpGet).toEqual(
        expect.objectContaining({ path: '/v1/health/live', port: 'http' }),
      );
      expect(livenessProbe?.httpGet).toEqual(
        expect.objectContaining({ path: '/v1/health/live', port: 'http' }),
      );
      expect(readinessProbe?.httpGet).toEqual(
        expect.objectContaining({ path: '/v1/health/ready', port: 'http' }),
      );
      // The start-up probe allows between 2 and 5 minutes before the container is restarted.
      const startupSeconds =
        (startupProbe!.periodSeconds ?? 10) *
        (startupProbe!.failureThreshold ?? 3);
      expect(startupSeconds).toBeGreaterThanOrEqual(120);
      expect(startupSeconds).toBeLessThanOrEqual(300);
    });

    it('requests and limits CPU and memory for the API and the migration', () => {
      for (const container of [api(), job.spec!.template.spec!.containers[0]]) {
        expect(Object.keys(container.resources?.requests ?? {}).sort()).toEqual(
          ['cpu', 'memory'],
        );
        expect(Object.keys(container.resources?.limits ?? {}).sort()).toEqual([
          'cpu',
          'memory',
        ]);
      }
    });

    it('runs as the non-root node user with a read-only root filesystem, no privilege escalation, no capabilities', () => {
      for (const pod of [podSpec(), job.spec!.template.spec!]) {
        expect(pod.securityContext).toEqual(
          expect.objectContaining({
            runAsNonRoot: true,
            runAsUser: 1000,
            runAsGroup: 1000,
            seccompProfile: { type: 'RuntimeDefault' },
          }),
        );
        for (const container of pod.containers) {
          expect(container.securityContext).toEqual(
            expect.objectContaining({
              runAsNonRoot: true,
              runAsUser: 1000,
              runAsGroup: 1000,
              readOnlyRootFilesystem: true,
              allowPrivilegeEscalation: false,
              capabilities: { drop: ['ALL'] },
              seccompProfile: { type: 'RuntimeDefault' },
            }),
          );
        }
      }
    });

    it('mounts emptyDirs at /tmp and at STORAGE_DIR, the only writable places', () => {
      expect(config.STORAGE_DIR).toBe('/data/uploads');
      const emptyDirs = new Set(
        (podSpec().volumes ?? [])
          .filter((volume) => volume.emptyDir)
          .map((volume) => volume.name),
      );
      const mounts = Object.fromEntries(
        (api().volumeMounts ?? []).map((mount) => [
          mount.mountPath,
          mount.name,
        ]),
      );
      expect(emptyDirs.has(mounts['/tmp'])).toBe(true);
      expect(emptyDirs.has(mounts[config.STORAGE_DIR])).toBe(true);
    });

    it('gives the drain time to finish: terminationGracePeriodSeconds above preStop + SHUTDOWN_TIMEOUT_MS', () => {
      const shutdownTimeoutMs = Number(config.SHUTDOWN_TIMEOUT_MS);
      expect(config.SHUTDOWN_TIMEOUT_MS).toMatch(/^\d+$/);
      const preStopSeconds = api().lifecycle?.preStop?.sleep?.seconds ?? 0;
      const grace = podSpec().terminationGracePeriodSeconds!;
      expect(grace * 1000).toBeGreaterThan(shutdownTimeoutMs);
      expect(grace * 1000).toBeGreaterThan(
        preStopSeconds * 1000 + shutdownTimeoutMs,
      );
    });

    it('exposes the metrics port METRICS_PORT as the named port "metrics", with the Prometheus scrape annotations', () => {
      const metricsPort = Number(config.METRICS_PORT);
      expect(metricsPort).toBe(9464);
      expect(api().ports).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            name: 'metrics',
            containerPort: metricsPort,
          }),
        ]),
      );
      expect(deployment.spec!.template.metadata!.annotations).toEqual(
        expect.objectContaining({
          'prometheus.io/scrape': 'true',
          'prometheus.io/port': String(metricsPort),
          'prometheus.io/path': '/metrics',
        }),
      );
    });

    it('serves the pods through a ClusterIP Service, port 80 to the named port http, that never selects migration pods', () => {
      const service = only<IService>(objects, 'Service');
      expect(service.spec!.type).toBe('ClusterIP');
      expect(service.spec!.ports).toEqual([
        expect.objectContaining({ name: 'http', port: 80, targetPort: 'http' }),
      ]);
      expect(
        selects(
          service.spec!.selector,
          deployment.spec!.template.metadata!.labels,
        ),
      ).toBe(true);
      expect(
        selects(service.spec!.selector, job.spec!.template.metadata!.labels),
      ).toBe(false);
    });

    it('has a PodDisruptionBudget over the API pods and an autoscaler of the Deployment from at least 2 replicas', () => {
      const pdb = only<IPodDisruptionBudget>(objects, 'PodDisruptionBudget');
      expect(
        pdb.spec!.minAvailable !== undefined ||
          pdb.spec!.maxUnavailable !== undefined,
      ).toBe(true);
      expect(
        selects(
          pdb.spec!.selector?.matchLabels,
          deployment.spec!.template.metadata!.labels,
        ),
      ).toBe(true);
      expect(
        selects(
          pdb.spec!.selector?.matchLabels,
          job.spec!.template.metadata!.labels,
        ),
      ).toBe(false);
      const hpa = only<IHorizontalPodAutoscaler>(
        objects,
        'HorizontalPodAutoscaler',
      );
      expect(hpa.spec!.scaleTargetRef).toEqual({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: deployment.metadata.name,
      });
      expect(hpa.spec!.minReplicas).toBeGreaterThanOrEqual(2);
      expect(hpa.spec!.maxReplicas).toBeGreaterThanOrEqual(
        hpa.spec!.minReplicas!,
      );
      expect(hpa.spec!.metrics).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            type: 'Resource',
            resource: expect.objectContaining({
              name: 'cpu',
              target: expect.objectContaining({ type: 'Utilization' }),
            }),
          }),
        ]),
      );
    });

    it('migrates in a Job running node dist/migrate.js with the same image, configuration and security context', () => {
      const migrate = job.spec!.template.spec!.containers[0];
      expect([...(migrate.command ?? []), ...(migrate.args ?? [])]).toEqual(
        expect.arrayContaining(['dist/migrate.js']),
      );
      expect(migrate.image).toBe(api().image);
      expect(migrate.envFrom).toEqual(api().envFrom);
      expect(migrate.securityContext).toEqual(api().securityContext);
      expect(job.spec!.template.spec!.securityContext).toEqual(
        podSpec().securityContext,
      );
      expect(job.spec!.template.spec!.restartPolicy).toBe('Never');
      expect(job.spec!.backoffLimit).toBeGreaterThanOrEqual(1);
      expect(job.spec!.ttlSecondsAfterFinished).toBeGreaterThan(0);
    });

    it('feeds the pods the rendered ConfigMap and Secret through envFrom', () => {
      const configMapName = only<IConfigMap>(objects, 'ConfigMap').metadata
        .name;
      const secretName = only<ISecret>(objects, 'Secret').metadata.name;
      expect(configMapName).toMatch(/^chat-api-config(-[a-z0-9]+)?$/);
      expect(secretName).toMatch(/^chat-api-secrets(-[a-z0-9]+)?$/);
      expect(api().envFrom).toEqual([
        { configMapRef: { name: configMapName } },
        { secretRef: { name: secretName } },
      ]);
    });

    it('names every variable of .env.example (and of the env schema) in the ConfigMap or the Secret, secrets only in the Secret', () => {
      const names = envExampleNames();
      expect(names).toEqual(
        expect.arrayContaining([
          'NODE_ENV',
          'DATABASE_URL',
          'SHUTDOWN_TIMEOUT_MS',
          'S3_SECRET_ACCESS_KEY',
        ]),
      );
      const keys = new Set([...Object.keys(config), ...Object.keys(secrets)]);
      expect(names.filter((name) => !keys.has(name))).toEqual([]);
      expect(ENV_VARIABLES.filter((name) => !keys.has(name))).toEqual([]);
      expect(Object.keys(config).filter((name) => name in secrets)).toEqual([]);
      expect(
        Object.keys(config).filter((name) => SECRET_NAME.test(name)),
      ).toEqual([]);
      expect(Object.keys(secrets).sort()).toEqual(
        expect.arrayContaining([
          'DATABASE_URL',
          'PASSWORD_PEPPER',
          'REDIS_URL',
          'S3_SECRET_ACCESS_KEY',
          'SESSION_SECRET',
          'SMTP_URL',
        ]),
      );
    });

    it('holds placeholders only in the Secret, never real secrets', () => {
      const placeholder = dir.endsWith('base')
        ? /^(change-me)?$/
        : /^$|CHANGE-ME/;
      expect(
        Object.entries(secrets).filter(([, value]) => !placeholder.test(value)),
      ).toEqual([]);
    });

    if (dir.endsWith('base')) {
      it('cannot start with any of its placeholders: the service then names the secret to set', () => {
        expect(() => loadConfig(podEnvironment(objects))).toThrow(ConfigError);
        // Each placeholder alone, in the otherwise valid configuration of the example overlay.
        const valid = podEnvironment(
          rendered.get('deploy/kubernetes/overlays/example')!,
        );
        const placeholders = Object.keys(secrets).filter(
          (name) => secrets[name] === 'change-me',
        );
        expect(placeholders.sort()).toEqual([
          'DATABASE_URL',
          'DATA_ENCRYPTION_KEY',
          'PASSWORD_PEPPER',
          'REDIS_URL',
          'SESSION_SECRET',
        ]);
        for (const name of placeholders)
          expect(() => loadConfig({ ...valid, [name]: 'change-me' })).toThrow(
            new RegExp(`- ${name}:`),
          );
      });
    } else {
      it('is a configuration the service accepts in production, with uploads on S3 for its several replicas', () => {
        const appConfig = loadConfig(podEnvironment(objects));
        expect(appConfig.env).toBe('production');
        expect(config.S3_BUCKET).not.toBe('');
        expect(appConfig.http.shutdownTimeoutMs).toBe(
          Number(config.SHUTDOWN_TIMEOUT_MS),
        );
      });

      it('sets the namespace, a tagged image and its own sizing', () => {
        const namespace = only<K8sObject>(objects, 'Namespace').metadata.name;
        for (const object of objects.filter((o) => o.kind !== 'Namespace'))
          expect([object.kind, object.metadata.namespace]).toEqual([
            object.kind,
            namespace,
          ]);
        expect(api().image).toMatch(/^[^:]+\/[^:]+:[\w.-]+$/);
        expect(api().image).not.toMatch(/:latest$/);
        const base = only<IDeployment>(
          rendered.get('deploy/kubernetes/base')!,
          'Deployment',
        );
        expect(deployment.spec!.replicas).not.toBe(base.spec!.replicas);
        expect(api().resources).not.toEqual(
          base.spec!.template.spec!.containers[0].resources,
        );
      });
    }
  });

  describe('the validation itself', () => {
    const deployment = () =>
      structuredClone<K8sObject & IDeployment>(
        only<IDeployment>(render(KUSTOMIZE_DIRS[0]), 'Deployment'),
      );

    it('rejects a field of the wrong type', () => {
      const bad = deployment();
      expect(() => validateObject(bad)).not.toThrow();
      (bad.spec as unknown as Record<string, unknown>).replicas = 'two';
      expect(() => validateObject(bad)).toThrow(/replicas/);
    });

    it('rejects a kind it has no model for, so nothing goes unvalidated', () => {
      expect(() =>
        validateObject({
          apiVersion: 'example.com/v1',
          kind: 'Frobnicator',
          metadata: { name: 'x' },
        }),
      ).toThrow(/unknown kind Frobnicator/);
    });

    it('reports a misspelled field, which the schema validation alone lets through', () => {
      const bad = deployment();
      const container = bad.spec!.template.spec!
        .containers[0] as unknown as Record<string, unknown>;
      container.readinessProb = container.readinessProbe;
      delete container.readinessProbe;
      expect(() => validateObject(bad)).not.toThrow();
      expect(fieldProblems([bad])).toEqual([
        expect.stringContaining('readinessProb'),
      ]);
    }, 60_000);
  });
});

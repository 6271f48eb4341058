import { createHmac } from 'node:crypto';
import {
  BUILT_IN_ENDPOINTS,
  Catalog,
  CatalogEndpoint,
  EndpointKind,
} from '../../catalog/catalog.schema';
import { Environment } from '../../config/environment';

/**
 * One key of an endpoint's pool: where it came from (`label`, shown to admins), a fingerprint that names
 * it in the cooldowns every instance shares, and the secret itself (never shown, never logged). An
 * endpoint that needs no key has one entry without a secret.
 */
export interface EndpointKey {
  label: string;
  fingerprint: string;
  secret?: string;
}

/** An endpoint as this instance resolved it from the catalog and its environment. */
export interface ResolvedEndpoint {
  id: string;
  kind: EndpointKind;
  /** The catalog's settings with `${NAME}` replaced; the secrets are in `keys` and `credentials`. */
  settings: CatalogEndpoint | { kind: 'local' };
  keys: EndpointKey[];
  /** Why it cannot be used here (a variable it needs is unset); undefined when it can. */
  unavailable?: string;
  /** Bedrock's signing credentials and Entra's client secret (the endpoints that do not use `keys`). */
  credentials?: Record<string, string>;
}

/** The endpoints a catalog has without declaring them: the echo and the two original providers. */
const BUILT_IN: Record<'openai' | 'anthropic', CatalogEndpoint> = {
  openai: {
    kind: 'openai',
    baseUrl: '${OPENAI_BASE_URL:-https://api.openai.com/v1}',
    apiKeyEnv: 'OPENAI_API_KEY',
  },
  anthropic: {
    kind: 'anthropic',
    baseUrl: '${ANTHROPIC_BASE_URL:-https://api.anthropic.com/v1}',
    apiKeyEnv: 'ANTHROPIC_API_KEY',
  },
};

/** Every endpoint of the catalog (declared ones replace built-in ones of the same id), resolved. */
export function resolveEndpoints(
  catalog: Pick<Catalog, 'endpoints'>,
  environment: Environment,
  fingerprintSecret: string,
): ResolvedEndpoint[] {
  const fingerprintOf = fingerprinter(fingerprintSecret);
  const declared: [string, CatalogEndpoint][] = Object.entries({
    ...BUILT_IN,
    ...catalog.endpoints,
  });
  const local: ResolvedEndpoint = {
    id: 'local',
    kind: 'local',
    settings: { kind: 'local' },
    keys: [{ label: 'none', fingerprint: 'none' }],
  };
  return [
    local,
    ...declared.map(([id, endpoint]) =>
      resolveEndpoint(id, endpoint, environment, fingerprintOf),
    ),
  ];
}

export function isBuiltInEndpoint(id: string): boolean {
  return (BUILT_IN_ENDPOINTS as readonly string[]).includes(id);
}

/** Thrown while resolving: the endpoint is kept, unavailable, with this reason. */
class Unavailable extends Error {}

type Fingerprinter = (secret: string) => string;

function resolveEndpoint(
  id: string,
  endpoint: CatalogEndpoint,
  environment: Environment,
  fingerprintOf: Fingerprinter,
): ResolvedEndpoint {
  const base = { id, kind: endpoint.kind, keys: [] as EndpointKey[] };
  try {
    const settings = expandSettings(endpoint, environment);
    return {
      ...base,
      settings,
      ...credentialsOf(settings, environment, fingerprintOf),
    };
  } catch (error) {
    if (!(error instanceof Unavailable)) throw error;
    return { ...base, settings: endpoint, unavailable: error.message };
  }
}

/** The keys (or credentials) an endpoint uses, read from the variables the catalog names. */
function credentialsOf(
  endpoint: CatalogEndpoint,
  environment: Environment,
  fingerprintOf: Fingerprinter,
): Pick<ResolvedEndpoint, 'keys' | 'credentials'> {
  switch (endpoint.kind) {
    case 'bedrock': {
      const accessKeyId = required(environment, endpoint.accessKeyIdEnv);
      const secretAccessKey = required(
        environment,
        endpoint.secretAccessKeyEnv,
      );
      const sessionToken = environment.get(endpoint.sessionTokenEnv);
      return {
        keys: [
          {
            label: endpoint.accessKeyIdEnv,
            fingerprint: fingerprintOf(accessKeyId),
          },
        ],
        credentials: {
          accessKeyId,
          secretAccessKey,
          ...(sessionToken ? { sessionToken } : {}),
        },
      };
    }
    case 'azure':
      if (endpoint.entra) {
        const clientSecret = required(
          environment,
          endpoint.entra.clientSecretEnv,
        );
        return {
          keys: [
            {
              label: 'entra',
              fingerprint: fingerprintOf(
                `${endpoint.entra.tenantId}/${endpoint.entra.clientId}`,
              ),
            },
          ],
          credentials: { clientSecret },
        };
      }
      return { keys: keyPool(endpoint.apiKeyEnv, environment, fingerprintOf) };
    default:
      return { keys: keyPool(endpoint.apiKeyEnv, environment, fingerprintOf) };
  }
}

/**
 * The keys of the variables named (each may hold several, separated by commas), labelled `NAME` or
 * `NAME#2` for the second key of a variable; none named: one entry without a secret (no auth).
 */
export function keyPool(
  names: string | string[] | undefined,
  environment: Environment,
  fingerprintOf: Fingerprinter,
): EndpointKey[] {
  if (names === undefined) return [{ label: 'none', fingerprint: 'none' }];
  const keys: EndpointKey[] = [];
  const seen = new Set<string>();
  for (const name of typeof names === 'string' ? [names] : names) {
    const values = (environment.get(name) ?? '')
      .split(',')
      .map((value) => value.trim())
      .filter(Boolean);
    values.forEach((secret, index) => {
      if (seen.has(secret)) return;
      seen.add(secret);
      keys.push({
        label: index === 0 ? name : `${name}#${index + 1}`,
        fingerprint: fingerprintOf(secret),
        secret,
      });
    });
  }
  if (keys.length === 0)
    throw new Unavailable(
      `no key: ${(typeof names === 'string' ? [names] : names).join(', ')} unset`,
    );
  return keys;
}

/**
 * A key's name in the shared cooldowns and the admins' view: the same key has the same name on every
 * instance (they share the session secret), and a short or guessable key cannot be found from it (an
 * HMAC, not a bare hash).
 */
export function fingerprinter(secret: string): Fingerprinter {
  return (value) =>
    createHmac('sha256', `provider-key-fingerprint:${secret}`)
      .update(value)
      .digest('hex')
      .slice(0, 16);
}

function required(environment: Environment, name: string): string {
  const value = environment.get(name);
  if (!value) throw new Unavailable(`${name} unset`);
  return value;
}

/** The settings with `${NAME}` / `${NAME:-default}` replaced in every string (secrets stay in variables). */
function expandSettings(
  endpoint: CatalogEndpoint,
  environment: Environment,
): CatalogEndpoint {
  const expand = (value: unknown): unknown => {
    if (typeof value === 'string') return expandString(value, environment);
    if (Array.isArray(value)) return value;
    if (typeof value === 'object' && value !== null)
      return Object.fromEntries(
        Object.entries(value).map(([key, inner]) => [
          key,
          key.endsWith('Env') ? inner : expand(inner),
        ]),
      );
    return value;
  };
  const expanded = expand(endpoint) as CatalogEndpoint;
  if ('baseUrl' in expanded && expanded.baseUrl !== undefined)
    expanded.baseUrl = httpUrl(expanded.baseUrl);
  return expanded;
}

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export function expandString(value: string, environment: Environment): string {
  return value.replace(
    REFERENCE,
    (_match, name: string, fallback: string | undefined) => {
      const found = environment.get(name) ?? fallback;
      if (found === undefined) throw new Unavailable(`${name} unset`);
      return found;
    },
  );
}

/** An http(s) URL without its trailing slashes (paths are appended to it). */
function httpUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Unavailable(`baseUrl is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Unavailable('baseUrl is not http(s)');
  return value.replace(/\/+$/, '');
}

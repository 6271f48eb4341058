import { Environment } from '../../config/environment';
import {
  expandString,
  fingerprinter,
  keyPool,
  resolveEndpoints,
} from './endpoint-settings';

const env = (values: Record<string, string>) => new Environment(values);
const SECRET = 'a session secret shared by the instances';
const fingerprintOf = fingerprinter(SECRET);

describe('resolveEndpoints', () => {
  it('has the echo and the two built-in endpoints, reading their variables', () => {
    const endpoints = resolveEndpoints(
      { endpoints: {} },
      env({
        OPENAI_API_KEY: 'sk-1',
        OPENAI_BASE_URL: 'http://127.0.0.1:9/v1/',
      }),
      SECRET,
    );
    expect(endpoints.map((endpoint) => endpoint.id)).toEqual([
      'local',
      'openai',
      'anthropic',
    ]);
    const [, openai, anthropic] = endpoints;
    expect(openai.settings).toEqual({
      kind: 'openai',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKeyEnv: 'OPENAI_API_KEY',
    });
    expect(openai.keys).toEqual([
      {
        label: 'OPENAI_API_KEY',
        fingerprint: fingerprintOf('sk-1'),
        secret: 'sk-1',
      },
    ]);
    expect(anthropic.unavailable).toBe('no key: ANTHROPIC_API_KEY unset');
    // Unavailable: its settings are kept as the catalog wrote them, references unresolved.
    expect(anthropic.settings).toEqual({
      kind: 'anthropic',
      baseUrl: '${ANTHROPIC_BASE_URL:-https://api.anthropic.com/v1}',
      apiKeyEnv: 'ANTHROPIC_API_KEY',
    });
  });

  it('uses the default of a reference when its variable is unset', () => {
    const [, openai] = resolveEndpoints(
      { endpoints: {} },
      env({ OPENAI_API_KEY: 'sk-1' }),
      SECRET,
    );
    expect(openai.settings).toEqual(
      expect.objectContaining({ baseUrl: 'https://api.openai.com/v1' }),
    );
  });

  it('lets a declared endpoint replace a built-in one, and needs no key when it names none', () => {
    const endpoints = resolveEndpoints(
      {
        endpoints: {
          openai: { kind: 'openai', baseUrl: 'http://ollama:11434/v1' },
        },
      },
      env({}),
      SECRET,
    );
    const openai = endpoints.find((endpoint) => endpoint.id === 'openai');
    expect(openai?.unavailable).toBeUndefined();
    expect(openai?.keys).toEqual([{ label: 'none', fingerprint: 'none' }]);
  });

  it('reads Bedrock credentials from the variables named, and is unavailable without them', () => {
    const catalog = {
      endpoints: {
        aws: {
          kind: 'bedrock' as const,
          region: '${AWS_REGION:-us-east-1}',
          accessKeyIdEnv: 'AWS_ACCESS_KEY_ID',
          secretAccessKeyEnv: 'AWS_SECRET_ACCESS_KEY',
          sessionTokenEnv: 'AWS_SESSION_TOKEN',
        },
      },
    };
    const aws = resolveEndpoints(
      catalog,
      env({ AWS_ACCESS_KEY_ID: 'AKIA1', AWS_SECRET_ACCESS_KEY: 'secret-1' }),
      SECRET,
    ).find((endpoint) => endpoint.id === 'aws');
    expect(aws?.credentials).toEqual({
      accessKeyId: 'AKIA1',
      secretAccessKey: 'secret-1',
    });
    expect(aws?.settings).toEqual(
      expect.objectContaining({ region: 'us-east-1' }),
    );
    expect(aws?.keys).toEqual([
      { label: 'AWS_ACCESS_KEY_ID', fingerprint: fingerprintOf('AKIA1') },
    ]);
    const missing = resolveEndpoints(catalog, env({}), SECRET).find(
      (endpoint) => endpoint.id === 'aws',
    );
    expect(missing?.unavailable).toBe('AWS_ACCESS_KEY_ID unset');
  });

  it("reads an Entra application's secret for Azure, and refuses a base URL that is not http(s)", () => {
    const endpoints = resolveEndpoints(
      {
        endpoints: {
          azure: {
            kind: 'azure',
            baseUrl: 'https://res.openai.azure.com/openai',
            apiVersion: '2024-10-21',
            entra: {
              tenantId: 'tenant',
              clientId: 'client',
              clientSecretEnv: 'AZURE_SECRET',
              authorityUrl: 'https://login.microsoftonline.com',
              scope: 'https://cognitiveservices.azure.com/.default',
            },
          },
          odd: { kind: 'openai', baseUrl: 'ftp://example.com' },
        },
      },
      env({ AZURE_SECRET: 's3' }),
      SECRET,
    );
    const azure = endpoints.find((endpoint) => endpoint.id === 'azure');
    expect(azure?.credentials).toEqual({ clientSecret: 's3' });
    expect(azure?.keys).toEqual([
      { label: 'entra', fingerprint: fingerprintOf('tenant/client') },
    ]);
    expect(
      endpoints.find((endpoint) => endpoint.id === 'odd')?.unavailable,
    ).toBe('baseUrl is not http(s)');
  });
});

describe('keyPool', () => {
  it('takes several keys from one variable and from several, once each, labelled by where they came from', () => {
    const pool = keyPool(
      ['A', 'B'],
      env({ A: 'k1, k2 ,,k1', B: 'k3,k2' }),
      fingerprintOf,
    );
    expect(pool.map((key) => [key.label, key.secret])).toEqual([
      ['A', 'k1'],
      ['A#2', 'k2'],
      ['B', 'k3'],
    ]);
    expect(new Set(pool.map((key) => key.fingerprint)).size).toBe(3);
    // A key's fingerprint is the same wherever it comes from: every instance names it alike.
    expect(keyPool('C', env({ C: 'k1' }), fingerprintOf)[0].fingerprint).toBe(
      pool[0].fingerprint,
    );
    // Keyed by the shared secret: another deployment's fingerprint of the same key differs.
    expect(fingerprinter('another secret')('k1')).not.toBe(pool[0].fingerprint);
    expect(pool[0].fingerprint).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe('expandString', () => {
  it('replaces references with values or defaults, and names the variable missing', () => {
    const values = env({ HOST: 'h', EMPTY: '' });
    expect(expandString('http://${HOST}:${PORT:-80}/v1', values)).toBe(
      'http://h:80/v1',
    );
    expect(expandString('${EMPTY:-fallback}', values)).toBe('fallback');
    expect(() => expandString('${NOPE}', values)).toThrow('NOPE unset');
  });
});

import { Environment } from './environment';
import { RateLimitName } from '../common/rate-limit/rate-limit.rules';

/** The one typed configuration object, built from the environment by loadConfig() at boot. */
export type NodeEnv = 'development' | 'test' | 'production';

export interface OAuthProviderConfig {
  clientId?: string;
  clientSecret?: string;
  authorizationUrl: string;
  tokenUrl: string;
  userinfoUrl: string;
}

export interface GithubOAuthConfig extends OAuthProviderConfig {
  emailsUrl: string;
}

export interface PaymentProviderConfig {
  apiKey?: string;
  webhookSecret?: string;
  apiUrl?: string;
}

export interface S3Config {
  endpoint?: string;
  bucket: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
}

export interface RateLimitConfig {
  max: number;
  windowSeconds: number;
}

export interface AppConfig {
  env: NodeEnv;
  http: {
    host: string;
    port: number;
    /** Accept queue length (the kernel caps it at net.core.somaxconn). */
    backlog: number;
    bodyLimitBytes: number;
    shutdownTimeoutMs: number;
    /** Swagger UI at /docs and the document at /docs-json: served to anyone, or not at all. */
    apiDocs: 'off' | 'public';
    /** Express `trust proxy` value: false, or the proxy addresses/subnets whose X-Forwarded-For is believed. */
    trustProxy: false | string[];
    /** The reference web client (web/dist) served at / from the API's origin. */
    webClient: boolean;
    /** Where the built client is: WEB_CLIENT_DIR, by default web/dist. */
    webClientDir: string;
  };
  /** `format`: auto (pretty on a terminal outside production, else JSON), json or pretty. */
  log: { level: string; format: 'auto' | 'json' | 'pretty' };
  /** `port`: the Prometheus listener's; undefined means no metrics listener. */
  metrics: { port?: number };
  /** OpenTelemetry: traces are exported only with an OTLP endpoint. */
  telemetry: { otlpEndpoint?: string; serviceName: string };
  database: {
    /** Unset in development means: start the embedded PostgreSQL below. */
    url?: string;
    /** Connections of this instance's pool: held only for single statements and short transactions. */
    poolSize: number;
    embeddedDir: string;
    embeddedPort: number;
    /** Apply pending migrations at start (off where a separate job migrates). */
    migrateAtStart: boolean;
  };
  redis: { url?: string; keyPrefix: string };
  appUrl: string;
  /** Public URL of this API (OAuth callbacks are built from it); defaults to APP_URL. */
  apiUrl: string;
  corsOrigins: string[];
  /** `dataEncryptionKey`: key material of encryption at rest (2FA secrets); unset, derived from `session`. */
  secrets: {
    session: string;
    passwordPepper: string;
    dataEncryptionKey?: string;
  };
  /** Chat, Skill runs and checkout refuse accounts whose email is not verified (403 email_unverified). */
  requireEmailVerification: boolean;
  /** `cacheTtlMs`: the longest a cached session is used without reading it again (changes drop it at once). */
  session: {
    ttlHours: number;
    cacheTtlMs: number;
    cookieName: string;
    secureCookie: boolean;
  };
  adminEmails: string[];
  /** Tools (docs/adr/0061-tools.md). */
  tools: {
    /** Longest one tool call (or one reading of an MCP server's tools) may take. */
    timeoutMs: number;
    /** How long a `confirm` call waits for its owner's decision before it is denied. */
    approvalTimeoutMs: number;
    /** Tool calls one user may make per window (RATE_LIMIT_TOOLS); a call over it is an error the model reads. */
    rateLimit: RateLimitConfig;
    /** Most model calls in one run that uses tools. */
    maxSteps: number;
    /** A tool's answer is cut to this many characters (with a marker) before the model reads it. */
    resultMaxChars: number;
    /** Host names (or addresses) of MCP servers allowed on private, loopback or link-local addresses. */
    mcpAllowedHosts: string[];
    /** MCP servers must be https (everywhere but development and test). */
    mcpRequireHttps: boolean;
  };
  rateLimits: Record<RateLimitName, RateLimitConfig>;
  catalogFile: string;
  /** Starter Skill templates, added at start when missing (admins edit and retire them afterwards). */
  skillTemplatesFile: string;
  providers: {
    /** Pause between the words of the built-in local/echo model. */
    echoDelayMs: number;
    /** Where the catalog's endpoints read their keys and settings (`apiKeyEnv`, `${NAME}`). */
    environment: Environment;
    /** Longest wait for a call's first token before it is tried again (at most providerTimeoutMs). */
    firstTokenTimeoutMs: number;
    /** Calls of one model tried again after a failure before its first token, before its fallbacks. */
    retries: number;
    /** Backoff before a retry: base x 2^n with full jitter, at most max. */
    retryBaseMs: number;
    retryMaxMs: number;
    /** Calls one run may make before its first token, over all its models (retries and fallbacks). */
    maxAttempts: number;
    /** How long a key that answered 429 or 401 rests when the upstream gave no Retry-After. */
    keyCooldownMs: number;
  };
  chat: {
    /** Longest wait for the provider's first event, and between two events, before the run fails. */
    providerTimeoutMs: number;
    /** A running request's lease; an instance renews it while generating, the sweeper fails expired ones. */
    leaseMs: number;
    /** Characters of message content one request may send (413 beyond); also the history budget. */
    maxInputChars: number;
    /** How long after arriving a run may wait to be claimed before it is refused (503 overloaded). */
    startTimeoutMs: number;
    /** When a new run is refused at once (503 overloaded): docs/adr/0065-adaptive-admission.md */
    admission: AdmissionConfig;
  };
  mail: { smtpUrl?: string; from: string };
  /** `timeoutMs`: how long one call to a provider (token, profile, emails) may take. */
  oauth: {
    google: OAuthProviderConfig;
    github: GithubOAuthConfig;
    timeoutMs: number;
  };
  billing: {
    stripe: PaymentProviderConfig;
    paddle: PaymentProviderConfig;
    /** How long after its period end a subscription still grants its plan when the renewal is late or failed. */
    graceMs: number;
  };
  /** `extraction`: the bounds of one file's text extraction (a worker thread per file). */
  storage: {
    dir: string;
    s3?: S3Config;
    extraction: { enabled: boolean; timeoutMs: number; memoryMb: number };
  };
}

/** Admission of new runs: measured headroom, and the operator's optional ceilings. */
export interface AdmissionConfig {
  /** Chat responses one instance keeps open at most (unset: no fixed ceiling). */
  maxStreams?: number;
  /** Runs one instance lets start at once (body, session, checks, claim, first token; unset: no fixed ceiling). */
  maxStarting?: number;
  /** Refuse while the event loop is stalled this long now, or was in the last second. */
  maxEventLoopDelayMs: number;
  /** Refuse while the event loop was busy more than this share of the last half second (1: never). */
  maxEventLoopUtilization: number;
  /** Refuse while resident memory (or V8's heap) is above this share of its limit (0..1). */
  maxMemoryRatio: number;
  /** Refuse while a claim or a query has waited this long for the database. */
  maxDatabaseWaitMs: number;
  /** The process's memory limit (MEMORY_LIMIT_MB); unset: the container's limit, else the machine's memory. */
  memoryLimitBytes?: number;
}

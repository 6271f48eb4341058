import { resolve } from 'node:path';
import { WEB_CLIENT_DIR } from '../web-client/web-client-dir';
import { AppConfig } from './app-config';
import { DEV_DEFAULTS, DEV_SECRETS, Env, envSchema } from './env.schema';
import { Environment } from './environment';

/** Thrown at boot when the environment is not usable; the message names every bad variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(
      `Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`,
    );
    this.name = 'ConfigError';
  }
}

const MIN_SECRET_LENGTH = 32;
/** The session cookie's name (the OpenAPI cookie scheme names it too). */
export const SESSION_COOKIE_NAME = 'sid';

export function loadConfig(source: NodeJS.ProcessEnv = process.env): AppConfig {
  const parsed = envSchema.safeParse(source);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map(
        (issue) => `${issue.path.join('.')}: ${issue.message}`,
      ),
    );
  }
  const env = parsed.data;
  const problems = env.NODE_ENV === 'production' ? productionProblems(env) : [];
  problems.push(...crossFieldProblems(env));
  if (problems.length > 0) throw new ConfigError(problems);
  return toAppConfig(env, source);
}

/** Production refuses dev conveniences: embedded database, in-process stores and dev secrets. */
function productionProblems(env: Env): string[] {
  const problems: string[] = [];
  for (const name of ['SESSION_SECRET', 'PASSWORD_PEPPER'] as const) {
    const value = env[name];
    if (!value) problems.push(`${name}: is required when NODE_ENV=production`);
    else if (
      value.length < MIN_SECRET_LENGTH ||
      (DEV_SECRETS as readonly string[]).includes(value)
    ) {
      problems.push(
        `${name}: must be a random value of at least ${MIN_SECRET_LENGTH} characters in production`,
      );
    }
  }
  if (!env.DATABASE_URL)
    problems.push(
      'DATABASE_URL: is required when NODE_ENV=production (the embedded database is for development only)',
    );
  if (!env.REDIS_URL)
    problems.push(
      'REDIS_URL: is required when NODE_ENV=production (in-process stores only work for one instance)',
    );
  return problems;
}

function crossFieldProblems(env: Env): string[] {
  const problems: string[] = [];
  const s3Fields = [
    env.S3_ENDPOINT,
    env.S3_ACCESS_KEY_ID,
    env.S3_SECRET_ACCESS_KEY,
  ];
  if (!env.S3_BUCKET && s3Fields.some((value) => value !== undefined)) {
    problems.push('S3_BUCKET: is required when any other S3_* variable is set');
  }
  for (const origin of env.CORS_ORIGINS) {
    if (!isOrigin(origin))
      problems.push(
        `CORS_ORIGINS: "${origin}" is not an origin like https://app.example.com`,
      );
  }
  // A provider that takes money needs its webhooks verified to activate what was paid for, and Stripe's
  // webhooks need the API key to read a completed checkout's subscription: both or neither.
  for (const [key, secret] of [
    ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET'],
    ['PADDLE_API_KEY', 'PADDLE_WEBHOOK_SECRET'],
  ] as const) {
    if (env[key] && !env[secret])
      problems.push(`${secret}: is required when ${key} is set`);
    if (env[secret] && !env[key])
      problems.push(`${key}: is required when ${secret} is set`);
  }
  if (
    env.DATA_ENCRYPTION_KEY !== undefined &&
    env.DATA_ENCRYPTION_KEY.length < 32
  ) {
    problems.push(
      'DATA_ENCRYPTION_KEY: must be a random value of at least 32 characters',
    );
  }
  for (const email of env.ADMIN_EMAILS) {
    if (!email.includes('@'))
      problems.push(`ADMIN_EMAILS: "${email}" is not an email address`);
  }
  return problems;
}

function toAppConfig(env: Env, source: NodeJS.ProcessEnv): AppConfig {
  const appUrl = env.APP_URL.replace(/\/+$/, '');
  return {
    env: env.NODE_ENV,
    http: {
      host: env.HOST,
      port: env.PORT,
      backlog: env.HTTP_BACKLOG,
      bodyLimitBytes: env.BODY_LIMIT_BYTES,
      shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
      // The document lists every route, admin and webhooks included: public only where asked in production.
      apiDocs:
        env.API_DOCS ?? (env.NODE_ENV === 'production' ? 'off' : 'public'),
      trustProxy: env.TRUST_PROXY.length > 0 ? env.TRUST_PROXY : false,
      // The reference client at /: on in development, where `npm start` should open a working product.
      webClient:
        (env.WEB_CLIENT ?? (env.NODE_ENV === 'production' ? 'off' : 'on')) ===
        'on',
      webClientDir: env.WEB_CLIENT_DIR
        ? resolve(env.WEB_CLIENT_DIR)
        : WEB_CLIENT_DIR,
    },
    log: { level: env.LOG_LEVEL, format: env.LOG_FORMAT },
    metrics: { port: env.METRICS_PORT },
    telemetry: {
      otlpEndpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT,
      serviceName: env.OTEL_SERVICE_NAME,
    },
    database: {
      url: env.DATABASE_URL,
      poolSize: env.DATABASE_POOL_SIZE,
      embeddedDir: env.EMBEDDED_POSTGRES_DIR,
      embeddedPort: env.EMBEDDED_POSTGRES_PORT,
      migrateAtStart: env.MIGRATE_AT_START,
    },
    redis: { url: env.REDIS_URL, keyPrefix: env.REDIS_KEY_PREFIX },
    appUrl,
    apiUrl: env.API_URL ? stripTrailingSlash(env.API_URL) : appUrl,
    corsOrigins:
      env.CORS_ORIGINS.length > 0
        ? env.CORS_ORIGINS.map(stripTrailingSlash)
        : [new URL(appUrl).origin],
    secrets: {
      session: env.SESSION_SECRET ?? DEV_DEFAULTS.SESSION_SECRET,
      passwordPepper: env.PASSWORD_PEPPER ?? DEV_DEFAULTS.PASSWORD_PEPPER,
      dataEncryptionKey: env.DATA_ENCRYPTION_KEY,
    },
    requireEmailVerification: env.REQUIRE_EMAIL_VERIFICATION,
    session: {
      ttlHours: env.SESSION_TTL_HOURS,
      cacheTtlMs: env.SESSION_CACHE_TTL_MS,
      cookieName: SESSION_COOKIE_NAME,
      secureCookie: appUrl.startsWith('https:'),
    },
    adminEmails: env.ADMIN_EMAILS.map((email) => email.toLowerCase()),
    tools: {
      timeoutMs: env.TOOL_TIMEOUT_MS,
      maxSteps: env.TOOL_MAX_STEPS,
      rateLimit: env.RATE_LIMIT_TOOLS,
      approvalTimeoutMs: env.TOOL_APPROVAL_TIMEOUT_MS,
      resultMaxChars: env.TOOL_RESULT_MAX_CHARS,
      mcpAllowedHosts: env.MCP_ALLOWED_HOSTS.map((host) => host.toLowerCase()),
      mcpRequireHttps: env.NODE_ENV === 'production',
    },
    rateLimits: {
      'login-ip': env.RATE_LIMIT_LOGIN_IP,
      'login-email': env.RATE_LIMIT_LOGIN_EMAIL,
      'register-ip': env.RATE_LIMIT_REGISTER_IP,
      'forgot-ip': env.RATE_LIMIT_FORGOT_IP,
      'forgot-email': env.RATE_LIMIT_FORGOT_EMAIL,
      'reset-ip': env.RATE_LIMIT_RESET_IP,
      'run-user': env.RATE_LIMIT_RUN_USER,
      'upload-user': env.RATE_LIMIT_UPLOAD_USER,
      'skill-write-user': env.RATE_LIMIT_SKILL_WRITE_USER,
      'invite-user': env.RATE_LIMIT_INVITE_USER,
      'password-user': env.RATE_LIMIT_PASSWORD_USER,
      'verify-email-ip': env.RATE_LIMIT_VERIFY_EMAIL_IP,
      'resend-verification-user': env.RATE_LIMIT_RESEND_VERIFICATION_USER,
      'two-factor-ip': env.RATE_LIMIT_TWO_FACTOR_IP,
      'two-factor-user': env.RATE_LIMIT_TWO_FACTOR_USER,
      'export-user': env.RATE_LIMIT_EXPORT_USER,
      'share-user': env.RATE_LIMIT_SHARE_USER,
      'shared-ip': env.RATE_LIMIT_SHARED_IP,
    },
    catalogFile: env.CATALOG_FILE,
    skillTemplatesFile: env.SKILL_TEMPLATES_FILE,
    providers: {
      echoDelayMs: env.ECHO_DELAY_MS,
      environment: new Environment(source),
      firstTokenTimeoutMs: Math.min(
        env.PROVIDER_FIRST_TOKEN_TIMEOUT_MS,
        env.PROVIDER_TIMEOUT_MS,
      ),
      retries: env.PROVIDER_RETRIES,
      retryBaseMs: env.PROVIDER_RETRY_BASE_MS,
      retryMaxMs: env.PROVIDER_RETRY_MAX_MS,
      maxAttempts: env.PROVIDER_MAX_ATTEMPTS,
      keyCooldownMs: env.PROVIDER_KEY_COOLDOWN_MS,
    },
    chat: {
      providerTimeoutMs: env.PROVIDER_TIMEOUT_MS,
      leaseMs: env.CHAT_LEASE_MS,
      maxInputChars: env.CHAT_MAX_INPUT_CHARS,
      startTimeoutMs: env.CHAT_START_TIMEOUT_MS,
      admission: {
        maxStreams: env.CHAT_MAX_STREAMS,
        maxStarting: env.CHAT_MAX_STARTING,
        maxEventLoopDelayMs: env.CHAT_ADMISSION_MAX_EVENT_LOOP_DELAY_MS,
        maxEventLoopUtilization:
          env.CHAT_ADMISSION_MAX_EVENT_LOOP_UTILIZATION_PERCENT / 100,
        maxMemoryRatio: env.CHAT_ADMISSION_MAX_MEMORY_PERCENT / 100,
        maxDatabaseWaitMs: env.CHAT_ADMISSION_MAX_DB_WAIT_MS,
        memoryLimitBytes:
          env.MEMORY_LIMIT_MB === undefined
            ? undefined
            : env.MEMORY_LIMIT_MB * 1024 * 1024,
      },
    },
    mail: { smtpUrl: env.SMTP_URL, from: env.MAIL_FROM },
    oauth: {
      google: {
        clientId: env.GOOGLE_CLIENT_ID,
        clientSecret: env.GOOGLE_CLIENT_SECRET,
        authorizationUrl: env.GOOGLE_AUTHORIZATION_URL,
        tokenUrl: env.GOOGLE_TOKEN_URL,
        userinfoUrl: env.GOOGLE_USERINFO_URL,
      },
      github: {
        clientId: env.GITHUB_CLIENT_ID,
        clientSecret: env.GITHUB_CLIENT_SECRET,
        authorizationUrl: env.GITHUB_AUTHORIZATION_URL,
        tokenUrl: env.GITHUB_TOKEN_URL,
        userinfoUrl: env.GITHUB_USERINFO_URL,
        emailsUrl: env.GITHUB_EMAILS_URL,
      },
      timeoutMs: env.OAUTH_TIMEOUT_MS,
    },
    billing: {
      stripe: {
        apiKey: env.STRIPE_SECRET_KEY,
        webhookSecret: env.STRIPE_WEBHOOK_SECRET,
        apiUrl: env.STRIPE_API_URL,
      },
      paddle: {
        apiKey: env.PADDLE_API_KEY,
        webhookSecret: env.PADDLE_WEBHOOK_SECRET,
        apiUrl: env.PADDLE_API_URL,
      },
      graceMs: env.BILLING_GRACE_DAYS * 24 * 3600 * 1000,
    },
    storage: {
      dir: env.STORAGE_DIR,
      extraction: {
        enabled: env.FILE_EXTRACTION_ENABLED,
        timeoutMs: env.FILE_EXTRACTION_TIMEOUT_MS,
        memoryMb: env.FILE_EXTRACTION_MEMORY_MB,
      },
      s3: env.S3_BUCKET
        ? {
            endpoint: env.S3_ENDPOINT,
            bucket: env.S3_BUCKET,
            region: env.S3_REGION,
            accessKeyId: env.S3_ACCESS_KEY_ID,
            secretAccessKey: env.S3_SECRET_ACCESS_KEY,
            forcePathStyle: env.S3_FORCE_PATH_STYLE,
          }
        : undefined,
    },
  };
}

function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (
      (url.protocol === 'http:' || url.protocol === 'https:') &&
      url.origin === stripTrailingSlash(value)
    );
  } catch {
    return false;
  }
}

function stripTrailingSlash(value: string): string {
  return value.replace(/\/+$/, '');
}

import { isIP } from 'node:net';
import { z } from 'zod';

/**
 * Every environment variable the service reads, with its default. `.env.example` mirrors this list;
 * src/config/load-config.spec.ts checks that the two stay in step. docs/adr/0005-configuration.md
 */
const DEV_SESSION_SECRET = 'dev-only-session-secret-change-me-in-production';
const DEV_PASSWORD_PEPPER = 'dev-only-password-pepper-change-me-in-production';
export const DEV_SECRETS = [DEV_SESSION_SECRET, DEV_PASSWORD_PEPPER] as const;

const optionalString = z
  .string()
  .trim()
  .optional()
  .transform((value) => (value ? value : undefined));

const httpUrl = z
  .string()
  .trim()
  .refine((value) => isHttpUrl(value), {
    message: 'must be an absolute http(s) URL',
  });

const optionalHttpUrl = optionalString.refine(
  (value) => value === undefined || isHttpUrl(value),
  {
    message: 'must be an absolute http(s) URL',
  },
);

const integer = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, { message: `must be an integer between ${min} and ${max}` })
    .transform(Number)
    .refine((value) => value >= min && value <= max, {
      message: `must be an integer between ${min} and ${max}`,
    });

/** An integer within bounds, or unset (empty counts as unset). */
const optionalInteger = (min: number, max: number) =>
  optionalString.pipe(integer(min, max).optional());

const commaList = z
  .string()
  .optional()
  .transform((value) =>
    (value ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0),
  );

/** "MAX/SECONDS": at most MAX requests per window of SECONDS. */
const rateLimit = z
  .string()
  .trim()
  .regex(/^\d{1,6}\/\d{1,6}$/, {
    message: 'must look like MAX/SECONDS, e.g. 10/900',
  })
  .transform((value) => {
    const [max, windowSeconds] = value.split('/').map(Number);
    return { max, windowSeconds };
  })
  .refine((limit) => limit.max >= 1 && limit.windowSeconds >= 1, {
    message: 'must have MAX and SECONDS of at least 1',
  });

const booleanFlag = z
  .enum(['true', 'false', '1', '0'], { message: 'must be true or false' })
  .transform((value) => value === 'true' || value === '1');

export const envSchema = z.object({
  NODE_ENV: z
    .enum(['development', 'test', 'production'], {
      message: 'must be development, test or production',
    })
    .default('development'),
  HOST: z
    .string()
    .trim()
    .refine((value) => isIP(value) !== 0 || value === 'localhost', {
      message: 'must be an IP address (0.0.0.0, ::, 127.0.0.1) or localhost',
    })
    .default('0.0.0.0'),
  PORT: integer(0, 65535).default(3000),
  HTTP_BACKLOG: integer(1, 65_535).default(4096),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      message: 'must be one of fatal, error, warn, info, debug, trace, silent',
    })
    .default('info'),
  LOG_FORMAT: z
    .enum(['auto', 'json', 'pretty'], {
      message: 'must be auto, json or pretty',
    })
    .default('auto'),
  METRICS_PORT: z
    .string()
    .trim()
    .optional()
    .transform((value) => (value ? value : undefined))
    .refine(
      (value) =>
        value === undefined ||
        (/^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= 65535),
      { message: 'must be an integer between 1 and 65535' },
    )
    .transform((value) => (value === undefined ? undefined : Number(value))),
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalHttpUrl,
  OTEL_SERVICE_NAME: z.string().trim().min(1).default('chat-api'),
  BODY_LIMIT_BYTES: integer(1024, 50 * 1024 * 1024).default(1024 * 1024),
  SHUTDOWN_TIMEOUT_MS: integer(0, 600_000).default(10_000),
  API_DOCS: z
    .enum(['off', 'public', ''], { message: 'must be off or public' })
    .optional()
    .transform((value) => value || undefined),
  WEB_CLIENT: z
    .enum(['on', 'off', ''], { message: 'must be on or off' })
    .optional()
    .transform((value) => value || undefined),
  WEB_CLIENT_DIR: z
    .string()
    .trim()
    .optional()
    .transform((value) => value || undefined),
  TRUST_PROXY: commaList.refine((entries) => entries.every(isProxyAddress), {
    message:
      'must list IP addresses, CIDR ranges or loopback, linklocal, uniquelocal',
  }),

  DATABASE_URL: optionalString.refine(
    (value) => value === undefined || /^postgres(ql)?:\/\//.test(value),
    {
      message: 'must be a postgres:// or postgresql:// URL',
    },
  ),
  DATABASE_POOL_SIZE: integer(2, 500).default(10),
  EMBEDDED_POSTGRES_DIR: z.string().trim().min(1).default('.data/postgres'),
  EMBEDDED_POSTGRES_PORT: integer(1, 65535).default(54329),
  MIGRATE_AT_START: booleanFlag.default(true),
  REDIS_URL: optionalString.refine(
    (value) => value === undefined || /^rediss?:\/\//.test(value),
    {
      message: 'must be a redis:// or rediss:// URL',
    },
  ),
  REDIS_KEY_PREFIX: z.string().trim().default('chat:'),

  APP_URL: httpUrl.default('http://localhost:3000'),
  API_URL: optionalHttpUrl,
  CORS_ORIGINS: commaList,
  SESSION_SECRET: optionalString,
  SESSION_TTL_HOURS: integer(1, 24 * 365).default(24 * 30),
  SESSION_CACHE_TTL_MS: integer(0, 3_600_000).default(30_000),
  PASSWORD_PEPPER: optionalString,
  ADMIN_EMAILS: commaList,
  RATE_LIMIT_LOGIN_IP: rateLimit.default({ max: 30, windowSeconds: 900 }),
  RATE_LIMIT_LOGIN_EMAIL: rateLimit.default({ max: 10, windowSeconds: 900 }),
  RATE_LIMIT_REGISTER_IP: rateLimit.default({ max: 10, windowSeconds: 3600 }),
  RATE_LIMIT_FORGOT_IP: rateLimit.default({ max: 10, windowSeconds: 3600 }),
  RATE_LIMIT_FORGOT_EMAIL: rateLimit.default({ max: 3, windowSeconds: 3600 }),
  RATE_LIMIT_RESET_IP: rateLimit.default({ max: 20, windowSeconds: 3600 }),
  RATE_LIMIT_RUN_USER: rateLimit.default({ max: 600, windowSeconds: 60 }),
  RATE_LIMIT_UPLOAD_USER: rateLimit.default({ max: 60, windowSeconds: 60 }),
  RATE_LIMIT_INVITE_USER: rateLimit.default({ max: 30, windowSeconds: 3600 }),
  RATE_LIMIT_SKILL_WRITE_USER: rateLimit.default({
    max: 60,
    windowSeconds: 60,
  }),
  RATE_LIMIT_PASSWORD_USER: rateLimit.default({ max: 10, windowSeconds: 900 }),
  RATE_LIMIT_VERIFY_EMAIL_IP: rateLimit.default({
    max: 30,
    windowSeconds: 3600,
  }),
  RATE_LIMIT_RESEND_VERIFICATION_USER: rateLimit.default({
    max: 3,
    windowSeconds: 3600,
  }),
  RATE_LIMIT_TWO_FACTOR_IP: rateLimit.default({ max: 30, windowSeconds: 900 }),
  RATE_LIMIT_TWO_FACTOR_USER: rateLimit.default({
    max: 10,
    windowSeconds: 900,
  }),
  RATE_LIMIT_EXPORT_USER: rateLimit.default({ max: 5, windowSeconds: 3600 }),
  RATE_LIMIT_SHARE_USER: rateLimit.default({ max: 30, windowSeconds: 60 }),
  RATE_LIMIT_SHARED_IP: rateLimit.default({ max: 120, windowSeconds: 60 }),
  REQUIRE_EMAIL_VERIFICATION: booleanFlag.default(false),
  DATA_ENCRYPTION_KEY: optionalString,
  CATALOG_FILE: z.string().trim().min(1).default('config/catalog.json'),
  SKILL_TEMPLATES_FILE: z
    .string()
    .trim()
    .min(1)
    .default('config/skill-templates.json'),

  ECHO_DELAY_MS: integer(0, 10_000).default(30),
  PROVIDER_TIMEOUT_MS: integer(100, 600_000).default(60_000),
  // Routing (docs/adr/0063): a model's first token may take this long before the call is tried again.
  PROVIDER_FIRST_TOKEN_TIMEOUT_MS: integer(100, 600_000).default(60_000),
  PROVIDER_RETRIES: integer(0, 10).default(2),
  PROVIDER_RETRY_BASE_MS: integer(0, 60_000).default(250),
  PROVIDER_RETRY_MAX_MS: integer(0, 60_000).default(4_000),
  PROVIDER_MAX_ATTEMPTS: integer(1, 50).default(6),
  PROVIDER_KEY_COOLDOWN_MS: integer(100, 3_600_000).default(60_000),
  // At least 5 s: renewed every quarter lease, a renewal then has 3.75 s to land even on a loaded machine.
  CHAT_LEASE_MS: integer(5_000, 3_600_000).default(60_000),
  CHAT_MAX_INPUT_CHARS: integer(1_000, 10_000_000).default(100_000),
  // Admission (docs/adr/0065): measured headroom decides; these two are an operator's ceilings, unset by default.
  CHAT_MAX_STREAMS: optionalInteger(1, 1_000_000),
  CHAT_MAX_STARTING: optionalInteger(1, 1_000_000),
  CHAT_START_TIMEOUT_MS: integer(50, 60_000).default(3_000),
  CHAT_ADMISSION_MAX_EVENT_LOOP_DELAY_MS: integer(10, 60_000).default(400),
  // 100 turns it off (the loop is never more than fully busy).
  CHAT_ADMISSION_MAX_EVENT_LOOP_UTILIZATION_PERCENT: integer(1, 100).default(
    100,
  ),
  CHAT_ADMISSION_MAX_MEMORY_PERCENT: integer(1, 100).default(90),
  CHAT_ADMISSION_MAX_DB_WAIT_MS: integer(10, 60_000).default(1_000),
  MEMORY_LIMIT_MB: optionalInteger(16, 16 * 1024 * 1024),
  OPENAI_API_KEY: optionalString,
  OPENAI_BASE_URL: httpUrl.default('https://api.openai.com/v1'),
  ANTHROPIC_API_KEY: optionalString,
  ANTHROPIC_BASE_URL: httpUrl.default('https://api.anthropic.com/v1'),

  SMTP_URL: optionalString.refine(
    (value) => value === undefined || /^smtps?:\/\//.test(value),
    {
      message: 'must be an smtp:// or smtps:// URL',
    },
  ),
  MAIL_FROM: z.string().trim().min(3).default('Chat <no-reply@localhost>'),

  GOOGLE_CLIENT_ID: optionalString,
  GOOGLE_CLIENT_SECRET: optionalString,
  GOOGLE_AUTHORIZATION_URL: httpUrl.default(
    'https://accounts.google.com/o/oauth2/v2/auth',
  ),
  GOOGLE_TOKEN_URL: httpUrl.default('https://oauth2.googleapis.com/token'),
  GOOGLE_USERINFO_URL: httpUrl.default(
    'https://openidconnect.googleapis.com/v1/userinfo',
  ),
  GITHUB_CLIENT_ID: optionalString,
  GITHUB_CLIENT_SECRET: optionalString,
  GITHUB_AUTHORIZATION_URL: httpUrl.default(
    'https://github.com/login/oauth/authorize',
  ),
  GITHUB_TOKEN_URL: httpUrl.default(
    'https://github.com/login/oauth/access_token',
  ),
  GITHUB_USERINFO_URL: httpUrl.default('https://api.github.com/user'),
  GITHUB_EMAILS_URL: httpUrl.default('https://api.github.com/user/emails'),
  OAUTH_TIMEOUT_MS: integer(100, 60_000).default(10_000),

  MCP_ALLOWED_HOSTS: commaList,
  TOOL_TIMEOUT_MS: integer(100, 600_000).default(30_000),
  TOOL_MAX_STEPS: integer(1, 64).default(8),
  RATE_LIMIT_TOOLS: rateLimit.default({ max: 120, windowSeconds: 60 }),
  TOOL_APPROVAL_TIMEOUT_MS: integer(1_000, 3_600_000).default(300_000),
  TOOL_RESULT_MAX_CHARS: integer(100, 1_000_000).default(20_000),

  STRIPE_SECRET_KEY: optionalString,
  STRIPE_WEBHOOK_SECRET: optionalString,
  STRIPE_API_URL: optionalHttpUrl,
  PADDLE_API_KEY: optionalString,
  PADDLE_WEBHOOK_SECRET: optionalString,
  PADDLE_API_URL: optionalHttpUrl,
  BILLING_GRACE_DAYS: integer(0, 60).default(3),

  STORAGE_DIR: z.string().trim().min(1).default('.data/files'),
  FILE_EXTRACTION_ENABLED: booleanFlag.default(true),
  FILE_EXTRACTION_TIMEOUT_MS: integer(1, 600_000).default(60_000),
  FILE_EXTRACTION_MEMORY_MB: integer(32, 4096).default(256),
  S3_ENDPOINT: optionalHttpUrl,
  S3_BUCKET: optionalString,
  S3_REGION: z.string().trim().min(1).default('us-east-1'),
  S3_ACCESS_KEY_ID: optionalString,
  S3_SECRET_ACCESS_KEY: optionalString,
  S3_FORCE_PATH_STYLE: booleanFlag.default(false),
});

export type Env = z.infer<typeof envSchema>;
export const ENV_VARIABLES = Object.keys(envSchema.shape) as (keyof Env)[];

export const DEV_DEFAULTS = {
  SESSION_SECRET: DEV_SESSION_SECRET,
  PASSWORD_PEPPER: DEV_PASSWORD_PEPPER,
} as const;

/** What Express' `trust proxy` accepts as a list (a hop count or `true` would trust any client). */
function isProxyAddress(entry: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return true;
  const [address, bits, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  const prefix = Number(bits);
  return /^\d+$/.test(bits) && prefix <= (version === 4 ? 32 : 128);
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

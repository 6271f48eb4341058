import { z } from 'zod';

/**
 * The wire formats an endpoint can speak (adapters live in src/models/providers). A model names an
 * endpoint; `provider` on a model is the older spelling of an endpoint of that kind and name.
 * docs/adr/0063-providers-and-routing.md
 */
export const ENDPOINT_KINDS = [
  'local',
  'openai',
  'anthropic',
  'gemini',
  'azure',
  'bedrock',
] as const;
export type EndpointKind = (typeof ENDPOINT_KINDS)[number];
/** The endpoints every catalog has unless it declares its own under these ids. */
export const BUILT_IN_ENDPOINTS = ['local', 'openai', 'anthropic'] as const;
export const NON_CHECKOUT_PLANS = ['free', 'enterprise'] as const;
export const DEFAULT_PLAN = 'free';

const credits = z.number().int().min(0).max(1_000_000);

const MODEL_ID = /^[a-z0-9][a-z0-9-]*\/[A-Za-z0-9][A-Za-z0-9._:-]*$/;
const ENDPOINT_ID = /^[a-z][a-z0-9-]{0,39}$/;

export const catalogModelSchema = z
  .strictObject({
    id: z.string().regex(MODEL_ID, 'must look like provider/name'),
    name: z.string().trim().min(1).max(100),
    /** The endpoint (an id of `endpoints`, or a built-in one) whose wire format and keys the model uses. */
    endpoint: z
      .string()
      .regex(ENDPOINT_ID, 'must be an endpoint id (lowercase)')
      .optional(),
    /** Older spelling: the built-in endpoint of that name. */
    provider: z.enum(BUILT_IN_ENDPOINTS).optional(),
    upstreamModel: z.string().trim().min(1).max(200),
    pricing: z
      .strictObject({
        perRequest: credits.default(0),
        per1kInputTokens: credits.default(0),
        per1kOutputTokens: credits.default(0),
        /** Input tokens read from the provider's prompt cache; absent: priced as other input. */
        per1kCachedInputTokens: credits.optional(),
      })
      .refine(
        (p) => p.perRequest + p.per1kInputTokens + p.per1kOutputTokens > 0,
        'at least one price must be above 0',
      )
      // A run's reservation prices all its input at per1kInputTokens, so cached input may not cost more.
      .refine(
        (p) =>
          p.per1kCachedInputTokens === undefined ||
          p.per1kCachedInputTokens <= p.per1kInputTokens,
        {
          message: 'per1kCachedInputTokens may not be above per1kInputTokens',
          path: ['per1kCachedInputTokens'],
        },
      ),
    maxOutputTokens: z.number().int().min(1).max(1_000_000),
    /** Tokens the model reads and writes in one call; attached files are fitted into what is left. */
    contextWindow: z.number().int().min(1_024).max(10_000_000).default(128_000),
    /** Models tried in order when this one fails before its first token (each only if the plan allows it). */
    fallbacks: z
      .array(z.string().regex(MODEL_ID, 'must be a model id'))
      .max(5)
      .default([]),
  })
  .refine((model) => model.maxOutputTokens < model.contextWindow, {
    message: 'maxOutputTokens must be below contextWindow',
    path: ['maxOutputTokens'],
  })
  .refine((model) => (model.endpoint ?? model.provider) !== undefined, {
    message: 'needs an endpoint',
    path: ['endpoint'],
  })
  .refine(
    (model) =>
      model.endpoint === undefined ||
      model.provider === undefined ||
      model.endpoint === model.provider,
    {
      message: 'endpoint and provider name different endpoints: keep one',
      path: ['provider'],
    },
  );

/** An environment variable's name: where a secret (or a setting) is read from, never the value itself. */
// Upper case only: a key pasted where its variable's name belongs is refused here, never logged as a name.
const envName = z
  .string()
  .max(100)
  .regex(
    /^[A-Z_][A-Z0-9_]*$/,
    'must be an environment variable name (upper-case letters, digits and _)',
  );
/** A setting that may name environment variables: `${NAME}` or `${NAME:-default}`. */
const setting = z.string().trim().min(1).max(500);
/** The variables holding the endpoint's keys; each may hold several, separated by commas (a key pool). */
const keyVariables = z.union([envName, z.array(envName).min(1).max(20)]);

export const catalogEndpointSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('openai'),
    baseUrl: setting,
    /** Absent: the endpoint needs no key (a local Ollama or vLLM). */
    apiKeyEnv: keyVariables.optional(),
  }),
  z.strictObject({
    kind: z.literal('anthropic'),
    baseUrl: setting.default('https://api.anthropic.com/v1'),
    apiKeyEnv: keyVariables,
  }),
  z.strictObject({
    kind: z.literal('gemini'),
    baseUrl: setting.default(
      'https://generativelanguage.googleapis.com/v1beta',
    ),
    apiKeyEnv: keyVariables,
  }),
  z
    .strictObject({
      kind: z.literal('azure'),
      /** `https://<resource>.openai.azure.com/openai`; a model's upstreamModel is its deployment. */
      baseUrl: setting,
      apiVersion: setting.default('2024-10-21'),
      apiKeyEnv: keyVariables.optional(),
      /** A Microsoft Entra application (client credentials) instead of keys. */
      entra: z
        .strictObject({
          tenantId: setting,
          clientId: setting,
          clientSecretEnv: envName,
          authorityUrl: setting.default('https://login.microsoftonline.com'),
          scope: setting.default(
            'https://cognitiveservices.azure.com/.default',
          ),
        })
        .optional(),
    })
    .refine((azure) => (azure.apiKeyEnv === undefined) !== !azure.entra, {
      message: 'needs either apiKeyEnv or entra (one of them)',
      path: ['apiKeyEnv'],
    }),
  z.strictObject({
    kind: z.literal('bedrock'),
    region: setting,
    /** Another endpoint than the region's (a VPC endpoint, a proxy). */
    baseUrl: setting.optional(),
    accessKeyIdEnv: envName.default('AWS_ACCESS_KEY_ID'),
    secretAccessKeyEnv: envName.default('AWS_SECRET_ACCESS_KEY'),
    sessionTokenEnv: envName.default('AWS_SESSION_TOKEN'),
  }),
]);

export const catalogEndpointsSchema = z
  .record(z.string(), catalogEndpointSchema)
  .superRefine((endpoints, context) => {
    for (const id of Object.keys(endpoints)) {
      if (!ENDPOINT_ID.test(id))
        context.addIssue({
          code: 'custom',
          path: [id],
          message: 'must be lowercase letters, digits or - (at most 40)',
        });
      if (id === 'local')
        context.addIssue({
          code: 'custom',
          path: [id],
          message: 'local is the built-in echo endpoint and cannot be declared',
        });
    }
  })
  .default({});

export const catalogPlanSchema = z.strictObject({
  code: z
    .string()
    .regex(
      /^[a-z][a-z0-9_-]{0,31}$/,
      'must be lowercase letters, digits, - or _',
    ),
  name: z.string().trim().min(1).max(100),
  price: z.strictObject({
    amount: z.number().int().min(0).max(100_000_000),
    currency: z
      .string()
      .regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as USD'),
    interval: z.enum(['month', 'year']).nullable(),
  }),
  dailyCredits: z.number().int().min(0).max(100_000_000),
  storageQuotaBytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  checkoutAllowed: z.boolean(),
  models: z.array(z.string()).min(1),
});

/** Prices of the built-in tools, per call (MCP tools are priced in their server's settings). */
const BUILTIN_TOOL_ID = /^(?!mcp\.)[a-z][a-z0-9_-]*\.[a-z0-9_.-]+$/;

export const catalogToolsSchema = z
  .record(z.string(), z.strictObject({ perCall: credits }))
  .superRefine((tools, context) => {
    for (const id of Object.keys(tools))
      if (!BUILTIN_TOOL_ID.test(id))
        context.addIssue({
          code: 'custom',
          path: [id],
          message:
            'must be a built-in tool id such as files.search (MCP tools are priced on their server)',
        });
  })
  .default({});

export const catalogSchema = z.strictObject({
  endpoints: catalogEndpointsSchema,
  models: z.array(catalogModelSchema).min(1),
  plans: z.array(catalogPlanSchema).min(1),
  tools: catalogToolsSchema,
});

export type Catalog = z.infer<typeof catalogSchema>;
export type CatalogModel = z.infer<typeof catalogModelSchema>;
export type CatalogEndpoint = z.infer<typeof catalogEndpointSchema>;
export type CatalogPlan = z.infer<typeof catalogPlanSchema>;

/** The endpoint a model uses: `endpoint`, or the built-in one its older `provider` names. */
export function endpointIdOf(model: CatalogModel): string {
  return model.endpoint ?? model.provider ?? 'local';
}

/** An endpoint's kind: declared, or built in (`local`, `openai`, `anthropic`); undefined when unknown. */
export function endpointKindOf(
  catalog: Pick<Catalog, 'endpoints'>,
  endpointId: string,
): EndpointKind | undefined {
  const declared = catalog.endpoints[endpointId];
  if (declared) return declared.kind;
  return (BUILT_IN_ENDPOINTS as readonly string[]).includes(endpointId)
    ? (endpointId as EndpointKind)
    : undefined;
}

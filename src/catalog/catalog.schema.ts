import { z } from 'zod';

/** The providers a catalog model can use (adapters live in src/models). */
export const MODEL_PROVIDERS = ['local', 'openai', 'anthropic'] as const;
export const NON_CHECKOUT_PLANS = ['free', 'enterprise'] as const;
export const DEFAULT_PLAN = 'free';

const credits = z.number().int().min(0).max(1_000_000);

export const catalogModelSchema = z
  .strictObject({
    id: z
      .string()
      .regex(
        /^[a-z0-9][a-z0-9-]*\/[A-Za-z0-9][A-Za-z0-9._:-]*$/,
        'must look like provider/name',
      ),
    name: z.string().trim().min(1).max(100),
    provider: z.enum(MODEL_PROVIDERS),
    upstreamModel: z.string().trim().min(1).max(200),
    pricing: z
      .strictObject({
        perRequest: credits.default(0),
        per1kInputTokens: credits.default(0),
        per1kOutputTokens: credits.default(0),
      })
      .refine(
        (p) => p.perRequest + p.per1kInputTokens + p.per1kOutputTokens > 0,
        'at least one price must be above 0',
      ),
    maxOutputTokens: z.number().int().min(1).max(1_000_000),
    /** Tokens the model reads and writes in one call; attached files are fitted into what is left. */
    contextWindow: z.number().int().min(1_024).max(10_000_000).default(128_000),
  })
  .refine((model) => model.maxOutputTokens < model.contextWindow, {
    message: 'maxOutputTokens must be below contextWindow',
    path: ['maxOutputTokens'],
  });

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
  models: z.array(catalogModelSchema).min(1),
  plans: z.array(catalogPlanSchema).min(1),
  tools: catalogToolsSchema,
});

export type Catalog = z.infer<typeof catalogSchema>;
export type CatalogModel = z.infer<typeof catalogModelSchema>;
export type CatalogPlan = z.infer<typeof catalogPlanSchema>;

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import {
  Catalog,
  catalogSchema,
  DEFAULT_PLAN,
  endpointIdOf,
  endpointKindOf,
  NON_CHECKOUT_PLANS,
} from './catalog.schema';

/** Thrown when the catalog cannot be used; the message names the file and each bad entry. */
export class CatalogError extends Error {
  constructor(file: string, problems: string[]) {
    super(
      `Invalid catalog ${file}:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`,
    );
    this.name = 'CatalogError';
  }
}

export function loadCatalogFile(file: string): Catalog {
  let text: string;
  try {
    text = readFileSync(resolve(file), 'utf8');
  } catch (error) {
    throw new CatalogError(file, [
      `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    ]);
  }
  return parseCatalog(text, file);
}

export function parseCatalog(text: string, file = 'catalog'): Catalog {
  let raw: unknown;
  try {
    raw = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    throw new CatalogError(file, [
      `is not valid JSON: ${(error as Error).message}`,
    ]);
  }
  const parsed = catalogSchema.safeParse(raw);
  if (!parsed.success)
    throw new CatalogError(
      file,
      parsed.error.issues.map((issue) => describeIssue(raw, issue)),
    );
  const problems = crossReferenceProblems(parsed.data);
  if (problems.length > 0) throw new CatalogError(file, problems);
  return parsed.data;
}

/** "plans[1] (pro).price.currency: must be ..." — the entry is named by its id/code when it has one. */
function describeIssue(raw: unknown, issue: z.core.$ZodIssue): string {
  const [section, index, ...rest] = issue.path;
  if (
    (section === 'models' || section === 'plans') &&
    typeof index === 'number'
  ) {
    const label = entryLabel(raw, section, index);
    const where = rest.length > 0 ? `.${rest.join('.')}` : '';
    return `${section}[${index}]${label}${where}: ${issue.message}`;
  }
  return `${issue.path.join('.') || '(root)'}: ${issue.message}`;
}

function entryLabel(
  raw: unknown,
  section: 'models' | 'plans',
  index: number,
): string {
  const entries = (raw as Record<string, unknown>)[section];
  const entry = Array.isArray(entries)
    ? (entries[index] as Record<string, unknown> | undefined)
    : undefined;
  const key = entry?.[section === 'models' ? 'id' : 'code'];
  return typeof key === 'string' ? ` (${key})` : '';
}

function crossReferenceProblems(catalog: Catalog): string[] {
  const problems: string[] = [];
  const modelIds = new Set<string>();
  const lowerCaseIds = new Set<string>();
  catalog.models.forEach((model, index) => {
    if (lowerCaseIds.has(model.id.toLowerCase()))
      problems.push(
        `models[${index}] (${model.id}): duplicate model id (ids are compared ignoring case)`,
      );
    modelIds.add(model.id);
    lowerCaseIds.add(model.id.toLowerCase());
    const endpoint = endpointIdOf(model);
    if (!endpointKindOf(catalog, endpoint))
      problems.push(
        `models[${index}] (${model.id}).endpoint: unknown endpoint "${endpoint}"`,
      );
  });
  catalog.models.forEach((model, index) => {
    const at = `models[${index}] (${model.id}).fallbacks`;
    for (const fallback of model.fallbacks) {
      if (fallback === model.id)
        problems.push(`${at}: a model cannot fall back to itself`);
      else if (!modelIds.has(fallback))
        problems.push(`${at}: unknown model id "${fallback}"`);
    }
    if (new Set(model.fallbacks).size !== model.fallbacks.length)
      problems.push(`${at}: lists a model twice`);
  });
  const planCodes = new Set<string>();
  catalog.plans.forEach((plan, index) => {
    const at = `plans[${index}] (${plan.code})`;
    if (planCodes.has(plan.code)) problems.push(`${at}: duplicate plan code`);
    planCodes.add(plan.code);
    for (const modelId of plan.models) {
      if (!modelIds.has(modelId))
        problems.push(`${at}.models: unknown model id "${modelId}"`);
    }
    if (new Set(plan.models).size !== plan.models.length)
      problems.push(`${at}.models: lists a model twice`);
    if (
      (NON_CHECKOUT_PLANS as readonly string[]).includes(plan.code) &&
      plan.checkoutAllowed
    ) {
      problems.push(
        `${at}.checkoutAllowed: the ${plan.code} plan cannot be checked out`,
      );
    }
    if (
      plan.checkoutAllowed &&
      (plan.price.amount === 0 || plan.price.interval === null)
    ) {
      problems.push(
        `${at}.price: a plan that can be checked out needs an amount above 0 and an interval`,
      );
    }
  });
  const free = catalog.plans.find((plan) => plan.code === DEFAULT_PLAN);
  if (free && free.price.amount !== 0)
    problems.push(
      `plans (${DEFAULT_PLAN}).price.amount: the free plan must cost 0`,
    );
  if (!planCodes.has(DEFAULT_PLAN))
    problems.push(
      `plans: the "${DEFAULT_PLAN}" plan is required (new accounts start on it)`,
    );
  return problems;
}

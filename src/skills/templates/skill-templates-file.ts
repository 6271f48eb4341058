import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { schemaProblems } from '../json-schema';

const jsonSchema = z
  .union([z.record(z.string(), z.unknown()), z.boolean()])
  .nullable()
  .optional();

const templateSchema = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, {
    message: 'must be a lower-case slug (a-z, 0-9, -)',
  }),
  name: z.string().trim().min(1).max(200),
  description: z.string().trim().min(1).max(1000),
  instruction: z.string().trim().min(1).max(20_000),
  input_schema: jsonSchema,
  output_schema: jsonSchema,
});

const fileSchema = z.strictObject({ templates: z.array(z.unknown()).min(1) });

export type SkillTemplateSeed = z.infer<typeof templateSchema>;

/** The starter templates file, checked whole: a bad entry stops the start with its index and id. */
export function loadSkillTemplatesFile(file: string): SkillTemplateSeed[] {
  let raw: unknown;
  try {
    raw = JSON.parse(
      readFileSync(resolve(file), 'utf8').replace(/^\uFEFF/, ''),
    );
  } catch (error) {
    throw new Error(
      `Invalid skill templates file ${file}: ${error instanceof Error ? error.message.split('\n')[0] : 'unreadable'}`,
      { cause: error },
    );
  }
  const parsed = fileSchema.safeParse(raw);
  const problems = parsed.success
    ? []
    : parsed.error.issues.map(
        (issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`,
      );
  const templates: SkillTemplateSeed[] = [];
  const seen = new Set<string>();
  for (const [index, entry] of (parsed.success
    ? parsed.data.templates
    : []
  ).entries()) {
    const checked = templateSchema.safeParse(entry);
    if (!checked.success) {
      problems.push(
        ...checked.error.issues.map(
          (issue) =>
            `templates.${index}${issue.path.map((part) => `.${String(part)}`).join('')}: ${issue.message}`,
        ),
      );
      continue;
    }
    const template = checked.data;
    templates.push(template);
    if (seen.has(template.id))
      problems.push(`templates.${index} (${template.id}): duplicate id`);
    seen.add(template.id);
    for (const field of ['input_schema', 'output_schema'] as const) {
      const schema = template[field];
      if (schema === null || schema === undefined) continue;
      for (const problem of schemaProblems(field, schema))
        problems.push(
          `templates.${index} (${template.id}).${problem.field}: ${problem.message}`,
        );
    }
  }
  if (problems.length > 0)
    throw new Error(
      `Invalid skill templates file ${file}:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`,
    );
  return templates;
}

import { ApiFailure, describeFailure, type Schemas } from '../../api/client';
import { FieldErrors, Notice } from '../Notice';
import { asObject } from './schema-form';

export type Skill = Schemas['SkillDto'];
export type SkillSummary = Schemas['SkillSummaryDto'];
export type SkillTemplate = Schemas['SkillTemplateDto'];
export type SkillVersion = Schemas['SkillVersionDto'];
export type SkillRun = Schemas['SkillRunDto'];
export type JsonSchema = SkillVersion['input_schema'];

export const INPUT_SCHEMA_HELP =
  'Optional. A JSON Schema (draft 2020-12) the run input must match; each property becomes a field of the Run form.';
export const OUTPUT_SCHEMA_HELP =
  'Optional. A JSON Schema (draft 2020-12) describing the answer.';

export function SchemaField({
  id,
  label,
  value,
  onChange,
  error,
  help = INPUT_SCHEMA_HELP,
}: {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  error: string | null;
  help?: string;
}) {
  const helpId = `${id}-help`;
  return (
    <div className="run-field">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        className="code"
        rows={6}
        spellCheck={false}
        value={value}
        onChange={(event) => onChange(event.target.value)}
        aria-describedby={error ? `${helpId} ${id}-error` : helpId}
        aria-invalid={error ? true : undefined}
      />
      <p id={helpId} className="meta help">
        {help}
      </p>
      {error ? (
        <p id={`${id}-error`} className="field-errors">
          {error}
        </p>
      ) : null}
    </div>
  );
}

export function FailureNotice({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <>
      <Notice kind="error">{describeFailure(error)}</Notice>
      {error instanceof ApiFailure ? (
        <FieldErrors fields={error.fields} />
      ) : null}
    </>
  );
}

/** An optional JSON Schema typed in a textarea: empty is none. */
export function parseSchema(
  text: string,
): { value: JsonSchema | undefined } | { invalid: string } {
  if (!text.trim()) return { value: undefined };
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value === 'boolean' || asObject(value))
      return { value: value as JsonSchema };
    return { invalid: 'The schema must be a JSON object (or true or false).' };
  } catch (failure) {
    return {
      invalid: `This is not valid JSON: ${failure instanceof Error ? failure.message : 'it cannot be read'}.`,
    };
  }
}

export function schemaText(schema: JsonSchema): string {
  return schema === null || schema === undefined
    ? ''
    : JSON.stringify(schema, null, 2);
}

export function fileNameOf(name: string): string {
  return (
    name.replace(/[^\p{L}\p{N}._-]+/gu, '-').replace(/^-+|-+$/g, '') || 'skill'
  );
}

import { ApiFailure } from '../../api/client';
import type { JsonSchema } from './shared';

export type FieldKind =
  | 'text'
  | 'textarea'
  | 'number'
  | 'integer'
  | 'boolean'
  | 'enum'
  | 'lines'
  | 'json';

export interface FieldSpec {
  name: string;
  label: string;
  kind: FieldKind;
  required: boolean;
  description?: string;
  options?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  initial: string | boolean;
}

/** How the input is asked for: one field per property of an object schema, or one field for the whole input. */
export type RunShape =
  | { mode: 'object'; fields: FieldSpec[] }
  | { mode: 'single'; field: FieldSpec }
  | { mode: 'none' };

const SHORT_TEXT = 200;

export function asObject(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

function typeOf(schema: Record<string, unknown>): string | undefined {
  const type = schema.type;
  if (Array.isArray(type))
    return type.find((entry) => entry !== 'null') as string | undefined;
  return typeof type === 'string' ? type : undefined;
}

function fieldOf(name: string, schema: unknown, required: boolean): FieldSpec {
  const node = asObject(schema) ?? {};
  const title =
    typeof node.title === 'string' && node.title.trim() ? node.title : name;
  const description =
    typeof node.description === 'string' ? node.description : undefined;
  const number = (key: string) =>
    typeof node[key] === 'number' ? node[key] : undefined;
  const base = {
    name,
    label: title,
    required,
    description,
    minimum: number('minimum'),
    maximum: number('maximum'),
    minLength: number('minLength'),
    maxLength: number('maxLength'),
  };
  const fallback = node.default;
  if (Array.isArray(node.enum) && node.enum.length > 0) {
    const index = node.enum.findIndex(
      (option) => JSON.stringify(option) === JSON.stringify(fallback),
    );
    return {
      ...base,
      kind: 'enum',
      options: node.enum,
      initial: index >= 0 ? String(index) : '',
    };
  }
  const type = typeOf(node);
  if (type === 'string') {
    const short = base.maxLength !== undefined && base.maxLength <= SHORT_TEXT;
    return {
      ...base,
      kind: short ? 'text' : 'textarea',
      initial: typeof fallback === 'string' ? fallback : '',
    };
  }
  if (type === 'number' || type === 'integer')
    return {
      ...base,
      kind: type,
      initial: typeof fallback === 'number' ? String(fallback) : '',
    };
  if (type === 'boolean')
    return { ...base, kind: 'boolean', initial: fallback === true };
  if (type === 'array' && typeOf(asObject(node.items) ?? {}) === 'string') {
    return {
      ...base,
      kind: 'lines',
      initial: Array.isArray(fallback) ? fallback.join('\n') : '',
    };
  }
  return {
    ...base,
    kind: 'json',
    initial: fallback === undefined ? '' : JSON.stringify(fallback, null, 2),
  };
}

export function runShapeOf(schema: JsonSchema): RunShape {
  if (schema === false) return { mode: 'none' };
  const node = asObject(schema);
  // No schema (or `true`): any text.
  if (
    !node ||
    Object.keys(node).every(
      (key) => key === '$schema' || key === 'description' || key === 'title',
    )
  ) {
    return {
      mode: 'single',
      field: {
        name: 'input',
        label: 'Input',
        kind: 'textarea',
        required: true,
        description:
          node && typeof node.description === 'string'
            ? node.description
            : undefined,
        initial: '',
      },
    };
  }
  const properties = asObject(node.properties);
  if (typeOf(node) === 'object' || properties) {
    const required = new Set(
      Array.isArray(node.required) ? (node.required as string[]) : [],
    );
    // The stored schema does not keep its properties' order: the required ones come first.
    const fields = Object.entries(properties ?? {}).map(([name, property]) =>
      fieldOf(name, property, required.has(name)),
    );
    return {
      mode: 'object',
      fields: [
        ...fields.filter((field) => field.required),
        ...fields.filter((field) => !field.required),
      ],
    };
  }
  const field = fieldOf('input', node, true);
  return {
    mode: 'single',
    field: {
      ...field,
      label: typeof node.title === 'string' ? node.title : 'Input',
      kind:
        field.kind === 'text' || field.kind === 'textarea'
          ? field.kind
          : 'json',
    },
  };
}

/** The value a field contributes to the input, `undefined` to leave it out; throws a message when unreadable. */
export function valueOf(field: FieldSpec, raw: string | boolean): unknown {
  if (field.kind === 'boolean') return raw === true;
  const text = String(raw);
  if (text.trim() === '' && field.kind !== 'text' && field.kind !== 'textarea')
    return undefined;
  switch (field.kind) {
    case 'text':
    case 'textarea':
      return text === '' && !field.required ? undefined : text;
    case 'number':
    case 'integer':
      return Number(text);
    case 'enum':
      return field.options?.[Number(text)];
    case 'lines':
      return text
        .split('\n')
        .map((line) => line.trim())
        .filter(Boolean);
    case 'json':
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new Error('is not valid JSON');
      }
  }
}

/** Server field errors (`input.tone`, or `input` naming a missing required property) by form field. */
export function errorsByField(
  failure: unknown,
  shape: RunShape,
): {
  byField: Record<string, string[]>;
  rest: { field: string; message: string }[];
} {
  const byField: Record<string, string[]> = {};
  const rest: { field: string; message: string }[] = [];
  if (!(failure instanceof ApiFailure)) return { byField, rest };
  const names =
    shape.mode === 'object'
      ? new Set(shape.fields.map((field) => field.name))
      : new Set<string>();
  for (const error of failure.fields) {
    let target: string | undefined;
    if (
      shape.mode === 'single' &&
      (error.field === 'input' || error.field.startsWith('input.'))
    )
      target = 'input';
    else if (error.field.startsWith('input.'))
      target = error.field.slice('input.'.length).split('.')[0];
    else if (error.field === 'input')
      target = /required property '([^']+)'/.exec(error.message)?.[1];
    if (target && (shape.mode === 'single' || names.has(target)))
      (byField[target] ??= []).push(error.message);
    else rest.push(error);
  }
  return { byField, rest };
}

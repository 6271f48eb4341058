import { useCallback, useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { eventsOf, type ChatEvent, type Usage } from '../api/chat-stream';
import { api, ApiFailure, describeFailure, failureOf, unwrap, type Plan, type Schemas } from '../api/client';
import type { ScreenProps } from '../App';
import { navigate, usePath } from '../navigation';
import { RouteLink } from './AuthScreens';
import { FieldErrors, Notice } from './Notice';
import { useFormAction } from './use-form-action';
import './skills.css';

type Skill = Schemas['SkillDto'];
type SkillSummary = Schemas['SkillSummaryDto'];
type SkillTemplate = Schemas['SkillTemplateDto'];
type SkillVersion = Schemas['SkillVersionDto'];
type SkillRun = Schemas['SkillRunDto'];
type JsonSchema = SkillVersion['input_schema'];

/** The caller's Skills: /skills lists them (new, import, templates), /skills/{id} shows one (run, publish, export). */
export function SkillsScreen({ user }: ScreenProps) {
  const path = usePath();
  const rest = path.replace(/^\/skills\/?/, '');
  const id = rest ? decodeURIComponent(rest.split('/')[0]) : '';
  return (
    <section className="skills" aria-labelledby="skills-heading">
      <h1 id="skills-heading">Skills</h1>
      {id ? <SkillDetail key={id} id={id} planCode={user.plan.code} /> : <SkillList />}
    </section>
  );
}

/** POST /v1/skills/{id}/run as server-sent events; a refusal before the first byte is thrown as an ApiFailure. */
async function* streamSkillRun(id: string, body: SkillRun, signal: AbortSignal): AsyncGenerator<ChatEvent> {
  const result = await api.POST('/v1/skills/{id}/run', { params: { path: { id } }, body, parseAs: 'stream', signal, headers: { Accept: 'text/event-stream' } });
  // openapi-fetch has already read a refusal's problem body into `error`.
  if (!result.response.ok || !result.data) throw failureOf(result.response, result.error);
  yield* eventsOf(result.data as ReadableStream<Uint8Array>);
}

// ---------------------------------------------------------------------------------------------------------
// /skills

function SkillList() {
  const [skills, setSkills] = useState<SkillSummary[] | null>(null);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [templates, setTemplates] = useState<SkillTemplate[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [duplicating, setDuplicating] = useState<string | null>(null);

  useEffect(() => {
    let alive = true;
    void (async () => {
      try {
        const [page, starters] = await Promise.all([
          api.GET('/v1/skills', { params: { query: { limit: 50 } } }).then(unwrap),
          api.GET('/v1/skills/templates').then(unwrap),
        ]);
        if (!alive) return;
        setSkills(page.data);
        setNextCursor(page.nextCursor);
        setTemplates(starters.data);
      } catch (failure) {
        if (alive) setError(failure);
      }
    })();
    return () => {
      alive = false;
    };
  }, []);

  const showMore = async () => {
    if (!nextCursor) return;
    try {
      const page = unwrap(await api.GET('/v1/skills', { params: { query: { limit: 50, cursor: nextCursor } } }));
      setSkills((current) => [...(current ?? []), ...page.data]);
      setNextCursor(page.nextCursor);
    } catch (failure) {
      setError(failure);
    }
  };

  const duplicate = async (template: SkillTemplate) => {
    setDuplicating(template.id);
    setError(null);
    try {
      const skill = unwrap(await api.POST('/v1/skills/templates/{id}/duplicate', { params: { path: { id: template.id } } }));
      navigate(`/skills/${skill.id}`);
    } catch (failure) {
      setError(failure);
      setDuplicating(null);
    }
  };

  return (
    <>
      {error ? <Notice kind="error">{describeFailure(error)}</Notice> : null}
      <section className="skills-panel" aria-labelledby="your-skills">
        <h2 id="your-skills">Your Skills</h2>
        {skills === null ? (
          error ? null : <p role="status">Loading…</p>
        ) : skills.length === 0 ? (
          <p>No Skills yet: create one, import one or start from a template.</p>
        ) : (
          <ul className="skill-list">
            {skills.map((skill) => (
              <li key={skill.id}>
                <RouteLink to={`/skills/${skill.id}`}>{skill.name}</RouteLink>
                <span className="meta">
                  version {skill.version} · updated <time dateTime={skill.updated_at}>{new Date(skill.updated_at).toLocaleString()}</time>
                </span>
              </li>
            ))}
          </ul>
        )}
        {nextCursor ? (
          <button type="button" className="secondary" onClick={() => void showMore()}>
            Show more
          </button>
        ) : null}
      </section>

      <NewSkillForm />
      <ImportForm />

      <section className="skills-panel" aria-labelledby="templates">
        <h2 id="templates">Starter templates</h2>
        {templates === null ? (
          error ? null : <p role="status">Loading…</p>
        ) : templates.length === 0 ? (
          <p>No templates.</p>
        ) : (
          <ul className="template-list">
            {templates.map((template) => (
              <li key={template.id}>
                <div>
                  <span className="skill-name">{template.name}</span>
                  <p className="meta">{template.description}</p>
                </div>
                <button type="button" className="secondary" aria-label={`Duplicate ${template.name}`} onClick={() => void duplicate(template)} disabled={duplicating !== null}>
                  {duplicating === template.id ? 'Duplicating…' : 'Duplicate'}
                </button>
              </li>
            ))}
          </ul>
        )}
      </section>
    </>
  );
}

function NewSkillForm() {
  const [name, setName] = useState('');
  const [instruction, setInstruction] = useState('');
  const [inputSchema, setInputSchema] = useState('');
  const [schemaError, setSchemaError] = useState<string | null>(null);
  const { error, busy, onSubmit } = useFormAction(async () => {
    setSchemaError(null);
    const parsed = parseSchema(inputSchema);
    if ('invalid' in parsed) return setSchemaError(parsed.invalid);
    const skill = unwrap(await api.POST('/v1/skills', { body: { name, instruction, ...(parsed.value === undefined ? {} : { input_schema: parsed.value }) } }));
    navigate(`/skills/${skill.id}`);
  });
  return (
    <section className="skills-panel" aria-labelledby="new-skill">
      <h2 id="new-skill">New Skill</h2>
      <form className="skill-form" onSubmit={onSubmit}>
        <label>
          Name
          <input name="name" required maxLength={200} value={name} onChange={(event) => setName(event.target.value)} />
        </label>
        <label>
          Instruction
          <textarea name="instruction" required rows={4} maxLength={20000} value={instruction} onChange={(event) => setInstruction(event.target.value)} />
        </label>
        <SchemaField id="new-input-schema" label="Input schema (JSON)" value={inputSchema} onChange={setInputSchema} error={schemaError} />
        <FailureNotice error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Creating…' : 'Create Skill'}
        </button>
      </form>
    </section>
  );
}

function ImportForm() {
  const [file, setFile] = useState<File | null>(null);
  const [readError, setReadError] = useState<string | null>(null);
  const { error, busy, onSubmit } = useFormAction(async () => {
    setReadError(null);
    if (!file) return;
    let body: unknown;
    try {
      body = JSON.parse(await file.text());
    } catch {
      return setReadError(`${file.name} is not a JSON file (a Skill export is JSON).`);
    }
    // The service checks the shape itself (and names a forbidden or unknown field).
    const skill = unwrap(await api.POST('/v1/skills/import', { body: body as Schemas['ImportSkillDto'] }));
    navigate(`/skills/${skill.id}`);
  });
  return (
    <section className="skills-panel" aria-labelledby="import-skill">
      <h2 id="import-skill">Import</h2>
      <form className="skill-form" onSubmit={onSubmit}>
        <label>
          Skill file (.json)
          <input type="file" name="skill" accept=".json,application/json" aria-describedby="import-help" onChange={(event) => (setFile(event.target.files?.[0] ?? null), setReadError(null))} />
        </label>
        <p id="import-help" className="meta">
          A file saved with a Skill's Export link.
        </p>
        {readError ? <Notice kind="error">{readError}</Notice> : null}
        <FailureNotice error={error} />
        <button type="submit" disabled={busy || !file}>
          {busy ? 'Importing…' : 'Import'}
        </button>
      </form>
    </section>
  );
}

// ---------------------------------------------------------------------------------------------------------
// /skills/{id}

function SkillDetail({ id, planCode }: { id: string; planCode: string }) {
  const [skill, setSkill] = useState<Skill | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [models, setModels] = useState<Plan['models']>([]);

  const load = useCallback(async () => {
    try {
      setSkill(unwrap(await api.GET('/v1/skills/{id}', { params: { path: { id } } })));
      setError(null);
    } catch (failure) {
      setError(failure);
    }
  }, [id]);

  useEffect(() => void load(), [load]);
  useEffect(() => {
    void (async () => {
      try {
        const plans = unwrap(await api.GET('/v1/plans')).data;
        setModels(plans.find((plan) => plan.code === planCode)?.models ?? []);
      } catch (failure) {
        setError(failure);
      }
    })();
  }, [planCode]);

  const back = (
    <p className="skills-back">
      <RouteLink to="/skills">All Skills</RouteLink>
    </p>
  );
  if (!skill) {
    return (
      <>
        {back}
        {error ? <Notice kind="error">{describeFailure(error)}</Notice> : <p role="status">Loading…</p>}
      </>
    );
  }
  const latest = skill.versions[skill.versions.length - 1];
  return (
    <>
      {back}
      <header className="skill-header">
        <h2>{skill.name}</h2>
        <p className="meta">
          Version {skill.version} · created <time dateTime={skill.created_at}>{new Date(skill.created_at).toLocaleString()}</time>
        </p>
        <a className="button-link" href={`/v1/skills/${encodeURIComponent(skill.id)}/export`} download={`${fileNameOf(skill.name)}.json`}>
          Export
        </a>
      </header>
      {error ? <Notice kind="error">{describeFailure(error)}</Notice> : null}
      {latest ? <RunForm key={latest.version} skillId={skill.id} version={latest} models={models} /> : null}
      {latest ? <PublishForm key={`publish-${latest.version}`} skillId={skill.id} latest={latest} onPublished={load} /> : null}
      <section className="skills-panel" aria-labelledby="versions">
        <h3 id="versions">Versions</h3>
        <ul className="version-list">
          {[...skill.versions].reverse().map((version) => (
            <li key={version.version}>
              <span className="skill-name">
                Version {version.version}
                {version === latest ? ' (current)' : ''}
              </span>{' '}
              <span className="meta">
                <time dateTime={version.created_at}>{new Date(version.created_at).toLocaleString()}</time>
              </span>
              <details>
                <summary>Instruction and schemas</summary>
                <p className="text">{version.instruction}</p>
                <SchemaView label="Input schema" schema={version.input_schema} />
                <SchemaView label="Output schema" schema={version.output_schema} />
              </details>
            </li>
          ))}
        </ul>
      </section>
    </>
  );
}

function SchemaView({ label, schema }: { label: string; schema: JsonSchema }) {
  if (schema === null || schema === undefined) return <p className="meta">{label}: none</p>;
  return (
    <>
      <p className="meta">{label}:</p>
      <pre className="schema-view">{JSON.stringify(schema, null, 2)}</pre>
    </>
  );
}

function PublishForm({ skillId, latest, onPublished }: { skillId: string; latest: SkillVersion; onPublished: () => Promise<void> }) {
  const [instruction, setInstruction] = useState(latest.instruction);
  const [inputSchema, setInputSchema] = useState(schemaText(latest.input_schema));
  const [outputSchema, setOutputSchema] = useState(schemaText(latest.output_schema));
  const [schemaErrors, setSchemaErrors] = useState<{ input?: string; output?: string }>({});
  const { error, busy, onSubmit } = useFormAction(async () => {
    const input = parseSchema(inputSchema);
    const output = parseSchema(outputSchema);
    const problems = { input: 'invalid' in input ? input.invalid : undefined, output: 'invalid' in output ? output.invalid : undefined };
    setSchemaErrors(problems);
    if ('invalid' in input || 'invalid' in output) return;
    unwrap(
      await api.POST('/v1/skills/{id}/versions', {
        params: { path: { id: skillId } },
        body: { instruction, ...(input.value === undefined ? {} : { input_schema: input.value }), ...(output.value === undefined ? {} : { output_schema: output.value }) },
      }),
    );
    await onPublished();
  });
  return (
    <section className="skills-panel" aria-labelledby="publish">
      <h3 id="publish">Publish a new version</h3>
      <form className="skill-form" onSubmit={onSubmit}>
        <label>
          Instruction
          <textarea name="instruction" required rows={4} maxLength={20000} value={instruction} onChange={(event) => setInstruction(event.target.value)} />
        </label>
        <SchemaField id="publish-input-schema" label="Input schema (JSON)" value={inputSchema} onChange={setInputSchema} error={schemaErrors.input ?? null} />
        <SchemaField id="publish-output-schema" label="Output schema (JSON)" value={outputSchema} onChange={setOutputSchema} error={schemaErrors.output ?? null} help={OUTPUT_SCHEMA_HELP} />
        <FailureNotice error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Publishing…' : 'Publish version'}
        </button>
      </form>
    </section>
  );
}

// ---------------------------------------------------------------------------------------------------------
// The run form, built from the version's input_schema

type FieldKind = 'text' | 'textarea' | 'number' | 'integer' | 'boolean' | 'enum' | 'lines' | 'json';

interface FieldSpec {
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
type RunShape = { mode: 'object'; fields: FieldSpec[] } | { mode: 'single'; field: FieldSpec } | { mode: 'none' };

const SHORT_TEXT = 200;

function asObject(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function typeOf(schema: Record<string, unknown>): string | undefined {
  const type = schema.type;
  if (Array.isArray(type)) return type.find((entry) => entry !== 'null') as string | undefined;
  return typeof type === 'string' ? type : undefined;
}

function fieldOf(name: string, schema: unknown, required: boolean): FieldSpec {
  const node = asObject(schema) ?? {};
  const title = typeof node.title === 'string' && node.title.trim() ? node.title : name;
  const description = typeof node.description === 'string' ? node.description : undefined;
  const number = (key: string) => (typeof node[key] === 'number' ? (node[key] as number) : undefined);
  const base = { name, label: title, required, description, minimum: number('minimum'), maximum: number('maximum'), minLength: number('minLength'), maxLength: number('maxLength') };
  const fallback = node.default;
  if (Array.isArray(node.enum) && node.enum.length > 0) {
    const index = node.enum.findIndex((option) => JSON.stringify(option) === JSON.stringify(fallback));
    return { ...base, kind: 'enum', options: node.enum, initial: index >= 0 ? String(index) : '' };
  }
  const type = typeOf(node);
  if (type === 'string') {
    const short = base.maxLength !== undefined && base.maxLength <= SHORT_TEXT;
    return { ...base, kind: short ? 'text' : 'textarea', initial: typeof fallback === 'string' ? fallback : '' };
  }
  if (type === 'number' || type === 'integer') return { ...base, kind: type, initial: typeof fallback === 'number' ? String(fallback) : '' };
  if (type === 'boolean') return { ...base, kind: 'boolean', initial: fallback === true };
  if (type === 'array' && typeOf(asObject(node.items) ?? {}) === 'string') {
    return { ...base, kind: 'lines', initial: Array.isArray(fallback) ? fallback.join('\n') : '' };
  }
  return { ...base, kind: 'json', initial: fallback === undefined ? '' : JSON.stringify(fallback, null, 2) };
}

function runShapeOf(schema: JsonSchema): RunShape {
  if (schema === false) return { mode: 'none' };
  const node = asObject(schema);
  // No schema (or `true`): any text.
  if (!node || Object.keys(node).every((key) => key === '$schema' || key === 'description' || key === 'title')) {
    return { mode: 'single', field: { name: 'input', label: 'Input', kind: 'textarea', required: true, description: node && typeof node.description === 'string' ? node.description : undefined, initial: '' } };
  }
  const properties = asObject(node.properties);
  if (typeOf(node) === 'object' || properties) {
    const required = new Set(Array.isArray(node.required) ? (node.required as string[]) : []);
    // The stored schema does not keep its properties' order: the required ones come first.
    const fields = Object.entries(properties ?? {}).map(([name, property]) => fieldOf(name, property, required.has(name)));
    return { mode: 'object', fields: [...fields.filter((field) => field.required), ...fields.filter((field) => !field.required)] };
  }
  const field = fieldOf('input', node, true);
  return { mode: 'single', field: { ...field, label: typeof node.title === 'string' ? node.title : 'Input', kind: field.kind === 'text' || field.kind === 'textarea' ? field.kind : 'json' } };
}

/** The value a field contributes to the input, `undefined` to leave it out; throws a message when unreadable. */
function valueOf(field: FieldSpec, raw: string | boolean): unknown {
  if (field.kind === 'boolean') return raw === true;
  const text = String(raw);
  if (text.trim() === '' && field.kind !== 'text' && field.kind !== 'textarea') return undefined;
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
function errorsByField(failure: unknown, shape: RunShape): { byField: Record<string, string[]>; rest: { field: string; message: string }[] } {
  const byField: Record<string, string[]> = {};
  const rest: { field: string; message: string }[] = [];
  if (!(failure instanceof ApiFailure)) return { byField, rest };
  const names = shape.mode === 'object' ? new Set(shape.fields.map((field) => field.name)) : new Set<string>();
  for (const error of failure.fields) {
    let target: string | undefined;
    if (shape.mode === 'single' && (error.field === 'input' || error.field.startsWith('input.'))) target = 'input';
    else if (error.field.startsWith('input.')) target = error.field.slice('input.'.length).split('.')[0];
    else if (error.field === 'input') target = /required property '([^']+)'/.exec(error.message)?.[1];
    if (target && (shape.mode === 'single' || names.has(target))) (byField[target] ??= []).push(error.message);
    else rest.push(error);
  }
  return { byField, rest };
}

function RunForm({ skillId, version, models }: { skillId: string; version: SkillVersion; models: Plan['models'] }) {
  const shape = runShapeOf(version.input_schema);
  const fields = shape.mode === 'object' ? shape.fields : shape.mode === 'single' ? [shape.field] : [];
  const [values, setValues] = useState<Record<string, string | boolean>>(() => Object.fromEntries(fields.map((field) => [field.name, field.initial])));
  const [model, setModel] = useState('');
  const [answer, setAnswer] = useState<string | null>(null);
  const [usage, setUsage] = useState<Usage | null>(null);
  const [streamFailure, setStreamFailure] = useState<string | null>(null);
  const [stopped, setStopped] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [localErrors, setLocalErrors] = useState<Record<string, string[]>>({});
  const [busy, setBusy] = useState(false);
  const running = useRef<{ key: string; abort: AbortController } | null>(null);

  useEffect(() => {
    if (!model && models[0]) setModel(models[0].id);
  }, [models, model]);
  useEffect(() => () => running.current?.abort.abort(), []);

  const run = async (event: FormEvent) => {
    event.preventDefault();
    if (busy || shape.mode === 'none') return;
    const problems: Record<string, string[]> = {};
    let input: unknown;
    if (shape.mode === 'single') {
      try {
        input = valueOf(shape.field, values.input ?? '');
      } catch (failure) {
        problems.input = [`${shape.field.label} ${(failure as Error).message}`];
      }
    } else {
      const object: Record<string, unknown> = {};
      for (const field of shape.fields) {
        try {
          const value = valueOf(field, values[field.name] ?? '');
          if (value !== undefined) object[field.name] = value;
        } catch (failure) {
          problems[field.name] = [`${field.label} ${(failure as Error).message}`];
        }
      }
      input = object;
    }
    setLocalErrors(problems);
    if (Object.keys(problems).length > 0) return;

    const key = crypto.randomUUID();
    const abort = new AbortController();
    running.current = { key, abort };
    setBusy(true);
    setError(null);
    setAnswer('');
    setUsage(null);
    setStreamFailure(null);
    setStopped(false);
    try {
      const body: SkillRun = { model, idempotencyKey: key, input: (input ?? '') as SkillRun['input'] };
      for await (const runEvent of streamSkillRun(skillId, body, abort.signal)) {
        if (runEvent.type === 'delta') setAnswer((text) => (text ?? '') + runEvent.text);
        else if (runEvent.type === 'usage') setUsage(runEvent.usage);
        else if (runEvent.type === 'error') setStreamFailure(runEvent.message);
        else if (runEvent.type === 'done' && runEvent.status === 'stopped') setStopped(true);
      }
    } catch (failure) {
      if (!abort.signal.aborted) {
        setAnswer(null);
        setError(failure);
      }
    } finally {
      running.current = null;
      setBusy(false);
    }
  };

  const stop = async () => {
    const current = running.current;
    if (!current) return;
    try {
      unwrap(await api.POST('/v1/chat/stop', { body: { idempotencyKey: current.key } }));
    } catch (failure) {
      setError(failure);
    }
  };

  const server = errorsByField(error, shape);
  // A 422 whose every problem is shown beside its field needs no repeating below.
  const placedAll = Object.keys(server.byField).length > 0 && server.rest.length === 0;
  const errorsOf = (name: string) => [...(localErrors[name] ?? []), ...(server.byField[name] ?? [])];
  const set = (name: string, value: string | boolean) => setValues((current) => ({ ...current, [name]: value }));

  return (
    <section className="skills-panel" aria-labelledby="run">
      <h3 id="run">Run</h3>
      {shape.mode === 'none' ? (
        <p>This version's input schema accepts no input: publish a new version to run it.</p>
      ) : (
        <form className="skill-form" onSubmit={(event) => void run(event)} noValidate={false}>
          <label>
            Model
            <select name="model" value={model} onChange={(event) => setModel(event.target.value)} disabled={busy} required>
              {models.map((option) => (
                <option key={option.id} value={option.id}>
                  {option.name}
                </option>
              ))}
            </select>
          </label>
          {shape.mode === 'object' && fields.length === 0 ? <p className="meta">This Skill takes no input fields.</p> : null}
          {fields.some((field) => field.required) ? (
            <p className="meta">
              Fields marked <span aria-hidden="true">*</span> (required) must be filled.
            </p>
          ) : null}
          {fields.map((field) => (
            <RunField key={field.name} field={field} value={values[field.name] ?? field.initial} onChange={(value) => set(field.name, value)} errors={errorsOf(field.name)} disabled={busy} />
          ))}
          {error ? <Notice kind="error">{placedAll ? 'The input does not match this Skill’s input schema: see the fields above.' : describeFailure(error)}</Notice> : null}
          <FieldErrors fields={server.rest} />
          <div className="run-actions">
            {busy ? (
              <button type="button" onClick={() => void stop()}>
                Stop
              </button>
            ) : (
              <button type="submit" disabled={!model}>
                Run
              </button>
            )}
          </div>
        </form>
      )}
      {answer !== null ? (
        <section className="run-answer" aria-label="Answer">
          <h4>Answer</h4>
          <div className="text" aria-live="polite">
            {answer || (busy ? '…' : '')}
          </div>
          {streamFailure ? <Notice kind="error">{streamFailure}</Notice> : null}
          {stopped ? <p className="meta">Stopped.</p> : null}
          {usage ? (
            <p className="meta usage">
              {usage.inputTokens} tokens in · {usage.outputTokens} out · {usage.credits} credits
            </p>
          ) : null}
        </section>
      ) : null}
    </section>
  );
}

function RunField({ field, value, onChange, errors, disabled }: { field: FieldSpec; value: string | boolean; onChange: (value: string | boolean) => void; errors: string[]; disabled: boolean }) {
  const id = `run-field-${field.name}`;
  const helpId = field.description ? `${id}-help` : undefined;
  const errorId = errors.length ? `${id}-errors` : undefined;
  const describedBy = [helpId, errorId].filter(Boolean).join(' ') || undefined;
  const common = { id, name: field.name, disabled, 'aria-describedby': describedBy, 'aria-invalid': errors.length ? true : undefined };
  const label: ReactNode = (
    <span>
      {field.label}
      {field.required ? (
        <span className="required">
          {' '}
          <span aria-hidden="true">*</span>
          <span className="visually-hidden">(required)</span>
        </span>
      ) : null}
    </span>
  );
  let control: ReactNode;
  switch (field.kind) {
    case 'boolean':
      control = <input {...common} type="checkbox" checked={value === true} onChange={(event) => onChange(event.target.checked)} />;
      break;
    case 'enum':
      control = (
        <select {...common} required={field.required} value={String(value)} onChange={(event) => onChange(event.target.value)}>
          <option value="">{field.required ? 'Choose…' : '(none)'}</option>
          {field.options?.map((option, index) => (
            <option key={index} value={String(index)}>
              {typeof option === 'string' ? option : JSON.stringify(option)}
            </option>
          ))}
        </select>
      );
      break;
    case 'number':
    case 'integer':
      control = (
        <input
          {...common}
          type="number"
          inputMode={field.kind === 'integer' ? 'numeric' : 'decimal'}
          step={field.kind === 'integer' ? 1 : 'any'}
          min={field.minimum}
          max={field.maximum}
          required={field.required}
          value={String(value)}
          onChange={(event) => onChange(event.target.value)}
        />
      );
      break;
    case 'text':
      control = <input {...common} type="text" required={field.required} minLength={field.minLength} maxLength={field.maxLength} value={String(value)} onChange={(event) => onChange(event.target.value)} />;
      break;
    default:
      control = (
        <textarea
          {...common}
          rows={field.kind === 'json' ? 5 : 4}
          required={field.required}
          minLength={field.kind === 'textarea' ? field.minLength : undefined}
          maxLength={field.kind === 'textarea' ? field.maxLength : undefined}
          value={String(value)}
          onChange={(event) => onChange(event.target.value)}
        />
      );
  }
  const hint = field.kind === 'lines' ? 'One per line.' : field.kind === 'json' ? 'As JSON.' : null;
  return (
    <div className={`run-field run-field-${field.kind}`}>
      {field.kind === 'boolean' ? (
        <label className="checkbox" htmlFor={id}>
          {control}
          {label}
        </label>
      ) : (
        <label htmlFor={id}>{label}</label>
      )}
      {field.kind === 'boolean' ? null : control}
      {field.description || hint ? (
        <p id={helpId} className="meta help">
          {[field.description, hint].filter(Boolean).join(' ')}
        </p>
      ) : null}
      {errors.length ? (
        <ul id={errorId} className="field-errors">
          {errors.map((message) => (
            <li key={message}>{message}</li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

// ---------------------------------------------------------------------------------------------------------
// Shared pieces

const INPUT_SCHEMA_HELP = 'Optional. A JSON Schema (draft 2020-12) the run input must match; each property becomes a field of the Run form.';
const OUTPUT_SCHEMA_HELP = 'Optional. A JSON Schema (draft 2020-12) describing the answer.';

function SchemaField({ id, label, value, onChange, error, help = INPUT_SCHEMA_HELP }: { id: string; label: string; value: string; onChange: (value: string) => void; error: string | null; help?: string }) {
  const helpId = `${id}-help`;
  return (
    <div className="run-field">
      <label htmlFor={id}>{label}</label>
      <textarea id={id} className="code" rows={6} spellCheck={false} value={value} onChange={(event) => onChange(event.target.value)} aria-describedby={error ? `${helpId} ${id}-error` : helpId} aria-invalid={error ? true : undefined} />
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

function FailureNotice({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <>
      <Notice kind="error">{describeFailure(error)}</Notice>
      {error instanceof ApiFailure ? <FieldErrors fields={error.fields} /> : null}
    </>
  );
}

/** An optional JSON Schema typed in a textarea: empty is none. */
function parseSchema(text: string): { value: JsonSchema | undefined } | { invalid: string } {
  if (!text.trim()) return { value: undefined };
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value === 'boolean' || asObject(value)) return { value: value as JsonSchema };
    return { invalid: 'The schema must be a JSON object (or true or false).' };
  } catch (failure) {
    return { invalid: `This is not valid JSON: ${failure instanceof Error ? failure.message : 'it cannot be read'}.` };
  }
}

function schemaText(schema: JsonSchema): string {
  return schema === null || schema === undefined ? '' : JSON.stringify(schema, null, 2);
}

function fileNameOf(name: string): string {
  return name.replace(/[^\p{L}\p{N}._-]+/gu, '-').replace(/^-+|-+$/g, '') || 'skill';
}

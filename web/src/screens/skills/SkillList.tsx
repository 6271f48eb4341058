import { useEffect, useState } from 'react';
import { api, describeFailure, unwrap, type Schemas } from '../../api/client';
import { navigate } from '../../navigation';
import { RouteLink } from '../AuthScreens';
import { Notice } from '../Notice';
import { useFormAction } from '../use-form-action';
import { createSkill, importSkill, listSkills, type SkillScope } from './scope';
import {
  FailureNotice,
  SchemaField,
  parseSchema,
  type SkillSummary,
  type SkillTemplate,
} from './shared';

export function SkillList({ scope }: { scope: SkillScope }) {
  const [skills, setSkills] = useState<SkillSummary[] | null>(null);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [templates, setTemplates] = useState<SkillTemplate[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [duplicating, setDuplicating] = useState<string | null>(null);

  useEffect(() => {
    let alive = true;
    void (async () => {
      try {
        // Starter templates become the person's own Skills: offered in the personal space only.
        const [page, starters] = await Promise.all([
          listSkills(scope, { limit: 50 }),
          scope.org
            ? { data: [] }
            : api.GET('/v1/skills/templates').then(unwrap),
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
  }, [scope]);

  const showMore = async () => {
    if (!nextCursor) return;
    try {
      const page = await listSkills(scope, { limit: 50, cursor: nextCursor });
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
      const skill = unwrap(
        await api.POST('/v1/skills/templates/{id}/duplicate', {
          params: { path: { id: template.id } },
        }),
      );
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
        <h2 id="your-skills">
          {scope.org ? `Skills of ${scope.org.name}` : 'Your Skills'}
        </h2>
        {scope.org && !scope.canWrite ? (
          <p className="meta">
            You can run {scope.org.name}’s Skills; its admins and owners create
            and change them.
          </p>
        ) : null}
        {skills === null ? (
          error ? null : (
            <p role="status">Loading…</p>
          )
        ) : skills.length === 0 ? (
          <p>
            {scope.org
              ? `${scope.org.name} has no Skills yet${scope.canWrite ? ': create one or import one' : ''}.`
              : 'No Skills yet: create one, import one or start from a template.'}
          </p>
        ) : (
          <ul className="skill-list">
            {skills.map((skill) => (
              <li key={skill.id}>
                <RouteLink to={`/skills/${skill.id}`}>{skill.name}</RouteLink>
                <span className="meta">
                  version {skill.version} · updated{' '}
                  <time dateTime={skill.updated_at}>
                    {new Date(skill.updated_at).toLocaleString()}
                  </time>
                </span>
              </li>
            ))}
          </ul>
        )}
        {nextCursor ? (
          <button
            type="button"
            className="secondary"
            onClick={() => void showMore()}
          >
            Show more
          </button>
        ) : null}
      </section>

      {scope.canWrite ? <NewSkillForm scope={scope} /> : null}
      {scope.canWrite ? <ImportForm scope={scope} /> : null}

      {scope.org ? null : (
        <section className="skills-panel" aria-labelledby="templates">
          <h2 id="templates">Starter templates</h2>
          {templates === null ? (
            error ? null : (
              <p role="status">Loading…</p>
            )
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
                  <button
                    type="button"
                    className="secondary"
                    aria-label={`Duplicate ${template.name}`}
                    onClick={() => void duplicate(template)}
                    disabled={duplicating !== null}
                  >
                    {duplicating === template.id ? 'Duplicating…' : 'Duplicate'}
                  </button>
                </li>
              ))}
            </ul>
          )}
        </section>
      )}
    </>
  );
}

function NewSkillForm({ scope }: { scope: SkillScope }) {
  const [name, setName] = useState('');
  const [instruction, setInstruction] = useState('');
  const [inputSchema, setInputSchema] = useState('');
  const [schemaError, setSchemaError] = useState<string | null>(null);
  const { error, busy, onSubmit } = useFormAction(async () => {
    setSchemaError(null);
    const parsed = parseSchema(inputSchema);
    if ('invalid' in parsed) return setSchemaError(parsed.invalid);
    const skill = await createSkill(scope, {
      name,
      instruction,
      ...(parsed.value === undefined ? {} : { input_schema: parsed.value }),
    });
    navigate(`/skills/${skill.id}`);
  });
  return (
    <section className="skills-panel" aria-labelledby="new-skill">
      <h2 id="new-skill">New Skill</h2>
      <form className="skill-form" onSubmit={onSubmit}>
        <label>
          Name
          <input
            name="name"
            required
            maxLength={200}
            value={name}
            onChange={(event) => setName(event.target.value)}
          />
        </label>
        <label>
          Instruction
          <textarea
            name="instruction"
            required
            rows={4}
            maxLength={20000}
            value={instruction}
            onChange={(event) => setInstruction(event.target.value)}
          />
        </label>
        <SchemaField
          id="new-input-schema"
          label="Input schema (JSON)"
          value={inputSchema}
          onChange={setInputSchema}
          error={schemaError}
        />
        <FailureNotice error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Creating…' : 'Create Skill'}
        </button>
      </form>
    </section>
  );
}

function ImportForm({ scope }: { scope: SkillScope }) {
  const [file, setFile] = useState<File | null>(null);
  const [readError, setReadError] = useState<string | null>(null);
  const { error, busy, onSubmit } = useFormAction(async () => {
    setReadError(null);
    if (!file) return;
    let body: unknown;
    try {
      body = JSON.parse(await file.text());
    } catch {
      return setReadError(
        `${file.name} is not a JSON file (a Skill export is JSON).`,
      );
    }
    // The service checks the shape itself (and names a forbidden or unknown field).
    const skill = await importSkill(scope, body as Schemas['ImportSkillDto']);
    navigate(`/skills/${skill.id}`);
  });
  return (
    <section className="skills-panel" aria-labelledby="import-skill">
      <h2 id="import-skill">Import</h2>
      <form className="skill-form" onSubmit={onSubmit}>
        <label>
          Skill file (.json)
          <input
            type="file"
            name="skill"
            accept=".json,application/json"
            aria-describedby="import-help"
            onChange={(event) => (
              setFile(event.target.files?.[0] ?? null),
              setReadError(null)
            )}
          />
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

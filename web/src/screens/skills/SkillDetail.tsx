import { useCallback, useEffect, useState } from 'react';
import { describeFailure } from '../../api/client';
import { modelsOf, usePlans } from '../../queries';
import { RouteLink } from '../AuthScreens';
import { Notice } from '../Notice';
import { useFormAction } from '../use-form-action';
import { RunForm } from './RunForm';
import { SkillTools } from './SkillTools';
import { exportHref, getSkill, publishVersion, type SkillScope } from './scope';
import {
  FailureNotice,
  OUTPUT_SCHEMA_HELP,
  SchemaField,
  fileNameOf,
  parseSchema,
  schemaText,
  type JsonSchema,
  type Skill,
  type SkillVersion,
} from './shared';

export function SkillDetail({ id, scope }: { id: string; scope: SkillScope }) {
  const [skill, setSkill] = useState<Skill | null>(null);
  const [skillError, setError] = useState<unknown>(null);
  const plans = usePlans();
  const models = modelsOf(plans.data, scope.planCode);
  const error = skillError ?? plans.error;

  const load = useCallback(
    () =>
      getSkill(scope, id)
        .then((found) => {
          setSkill(found);
          setError(null);
        })
        .catch(setError),
    [scope, id],
  );

  useEffect(() => void load(), [load]);

  const back = (
    <p className="skills-back">
      <RouteLink to="/skills">All Skills</RouteLink>
    </p>
  );
  if (!skill) {
    return (
      <>
        {back}
        {error ? (
          <Notice kind="error">{describeFailure(error)}</Notice>
        ) : (
          <p role="status">Loading…</p>
        )}
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
          Version {skill.version} · created{' '}
          <time dateTime={skill.created_at}>
            {new Date(skill.created_at).toLocaleString()}
          </time>
          {scope.org ? ` · shared in ${scope.org.name}` : ''}
        </p>
        <a
          className="button-link"
          href={exportHref(scope, skill.id)}
          download={`${fileNameOf(skill.name)}.json`}
        >
          Export
        </a>
      </header>
      {error ? <Notice kind="error">{describeFailure(error)}</Notice> : null}
      {latest ? (
        <RunForm
          key={latest.version}
          scope={scope}
          skillId={skill.id}
          version={latest}
          models={models}
        />
      ) : null}
      {scope.canWrite ? (
        <SkillTools scope={scope} skill={skill} onSaved={load} />
      ) : (
        <section className="skills-panel" aria-labelledby="skill-tools">
          <h3 id="skill-tools">Tools</h3>
          <p>
            {skill.allowed_tools.length
              ? `Its runs may call: ${skill.allowed_tools.join(', ')}.`
              : 'Its runs call no tools.'}
          </p>
        </section>
      )}
      {latest && scope.canWrite ? (
        <PublishForm
          key={`publish-${latest.version}`}
          scope={scope}
          skillId={skill.id}
          latest={latest}
          onPublished={load}
        />
      ) : null}
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
                <time dateTime={version.created_at}>
                  {new Date(version.created_at).toLocaleString()}
                </time>
              </span>
              <details>
                <summary>Instruction and schemas</summary>
                <p className="text">{version.instruction}</p>
                <SchemaView
                  label="Input schema"
                  schema={version.input_schema}
                />
                <SchemaView
                  label="Output schema"
                  schema={version.output_schema}
                />
              </details>
            </li>
          ))}
        </ul>
      </section>
    </>
  );
}

function SchemaView({ label, schema }: { label: string; schema: JsonSchema }) {
  if (schema === null || schema === undefined)
    return <p className="meta">{label}: none</p>;
  return (
    <>
      <p className="meta">{label}:</p>
      <pre className="schema-view">{JSON.stringify(schema, null, 2)}</pre>
    </>
  );
}

function PublishForm({
  scope,
  skillId,
  latest,
  onPublished,
}: {
  scope: SkillScope;
  skillId: string;
  latest: SkillVersion;
  onPublished: () => Promise<void>;
}) {
  const [instruction, setInstruction] = useState(latest.instruction);
  const [inputSchema, setInputSchema] = useState(
    schemaText(latest.input_schema),
  );
  const [outputSchema, setOutputSchema] = useState(
    schemaText(latest.output_schema),
  );
  const [schemaErrors, setSchemaErrors] = useState<{
    input?: string;
    output?: string;
  }>({});
  const { error, busy, onSubmit } = useFormAction(async () => {
    const input = parseSchema(inputSchema);
    const output = parseSchema(outputSchema);
    const problems = {
      input: 'invalid' in input ? input.invalid : undefined,
      output: 'invalid' in output ? output.invalid : undefined,
    };
    setSchemaErrors(problems);
    if ('invalid' in input || 'invalid' in output) return;
    await publishVersion(scope, skillId, {
      instruction,
      ...(input.value === undefined ? {} : { input_schema: input.value }),
      ...(output.value === undefined ? {} : { output_schema: output.value }),
    });
    await onPublished();
  });
  return (
    <section className="skills-panel" aria-labelledby="publish">
      <h3 id="publish">Publish a new version</h3>
      <form className="skill-form" onSubmit={onSubmit}>
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
          id="publish-input-schema"
          label="Input schema (JSON)"
          value={inputSchema}
          onChange={setInputSchema}
          error={schemaErrors.input ?? null}
        />
        <SchemaField
          id="publish-output-schema"
          label="Output schema (JSON)"
          value={outputSchema}
          onChange={setOutputSchema}
          error={schemaErrors.output ?? null}
          help={OUTPUT_SCHEMA_HELP}
        />
        <FailureNotice error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Publishing…' : 'Publish version'}
        </button>
      </form>
    </section>
  );
}

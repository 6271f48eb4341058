import { useEffect, useState, type FormEvent, type ReactNode } from 'react';
import { EVENT_STREAM, eventsOrRefusal } from '../../api/chat-stream';
import { describeFailure, type Plan } from '../../api/client';
import { AnswerText, preloadMarkdown } from '../chat/AnswerText';
import { describeChatFailure } from '../chat/chat-failure';
import { useStreamedTurn, type OpenStream } from '../chat/use-streamed-turn';
import { Notice, FieldErrors } from '../Notice';
import { ToolCallList } from '../ToolCalls';
import {
  errorsByField,
  runShapeOf,
  valueOf,
  type FieldSpec,
} from './schema-form';
import { runSkill, type SkillScope } from './scope';
import { type SkillRun, type SkillVersion } from './shared';

/** A Skill's run as server-sent events; a refusal before the first byte is thrown as an ApiFailure. */
function skillRun(
  scope: SkillScope,
  id: string,
  body: (idempotencyKey: string) => SkillRun,
): OpenStream {
  return async function* (idempotencyKey, signal) {
    yield* eventsOrRefusal(
      await runSkill(scope, id, body(idempotencyKey), {
        ...EVENT_STREAM,
        signal,
      }),
    );
  };
}

export function RunForm({
  scope,
  skillId,
  version,
  models,
}: {
  scope: SkillScope;
  skillId: string;
  version: SkillVersion;
  models: Plan['models'];
}) {
  const shape = runShapeOf(version.input_schema);
  const fields =
    shape.mode === 'object'
      ? shape.fields
      : shape.mode === 'single'
        ? [shape.field]
        : [];
  const [values, setValues] = useState<Record<string, string | boolean>>(() =>
    Object.fromEntries(fields.map((field) => [field.name, field.initial])),
  );
  const [model, setModel] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [localErrors, setLocalErrors] = useState<Record<string, string[]>>({});
  const turn = useStreamedTurn();
  const { answer, streaming: busy } = turn;

  // The first model is chosen once the models are known: adjusted while rendering, not by an effect.
  if (!model && models[0]?.id) setModel(models[0].id);
  // The answer's Markdown renderer is fetched while the form is filled in.
  useEffect(preloadMarkdown, []);

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
          problems[field.name] = [
            `${field.label} ${(failure as Error).message}`,
          ];
        }
      }
      input = object;
    }
    setLocalErrors(problems);
    if (Object.keys(problems).length > 0) return;

    setError(null);
    const outcome = await turn.start(
      skillRun(scope, skillId, (idempotencyKey) => ({
        model,
        idempotencyKey,
        input: (input ?? '') as SkillRun['input'],
      })),
      { orgName: scope.org?.name },
    );
    if (!outcome.started && !outcome.canceled) setError(outcome.error);
  };

  const stop = () => void turn.stop().catch(setError);

  const server = errorsByField(error, shape);
  // A 422 whose every problem is shown beside its field needs no repeating below.
  const placedAll =
    Object.keys(server.byField).length > 0 && server.rest.length === 0;
  const errorsOf = (name: string) => [
    ...(localErrors[name] ?? []),
    ...(server.byField[name] ?? []),
  ];
  const set = (name: string, value: string | boolean) =>
    setValues((current) => ({ ...current, [name]: value }));

  return (
    <section className="skills-panel" aria-labelledby="run">
      <h3 id="run">Run</h3>
      {shape.mode === 'none' ? (
        <p>
          This version's input schema accepts no input: publish a new version to
          run it.
        </p>
      ) : (
        <form
          className="skill-form"
          onSubmit={(event) => void run(event)}
          noValidate={false}
        >
          <label>
            Model
            <select
              name="model"
              value={model}
              onChange={(event) => setModel(event.target.value)}
              disabled={busy}
              required
            >
              {models.map((option) => (
                <option key={option.id} value={option.id}>
                  {option.name}
                </option>
              ))}
            </select>
          </label>
          {shape.mode === 'object' && fields.length === 0 ? (
            <p className="meta">This Skill takes no input fields.</p>
          ) : null}
          {fields.some((field) => field.required) ? (
            <p className="meta">
              Fields marked <span aria-hidden="true">*</span> (required) must be
              filled.
            </p>
          ) : null}
          {fields.map((field) => (
            <RunField
              key={field.name}
              field={field}
              value={values[field.name] ?? field.initial}
              onChange={(value) => set(field.name, value)}
              errors={errorsOf(field.name)}
              disabled={busy}
            />
          ))}
          {error ? (
            <Notice kind="error">
              {placedAll
                ? 'The input does not match this Skill’s input schema: see the fields above.'
                : scope.org
                  ? describeChatFailure(error, scope.org.name)
                  : describeFailure(error)}
            </Notice>
          ) : null}
          <FieldErrors fields={server.rest} />
          <div className="run-actions">
            {busy ? (
              <button type="button" onClick={stop}>
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
          <ToolCallList
            tools={answer.tools}
            onDecide={(call, decision) =>
              turn.decide(call, decision).catch(setError)
            }
          />
          <div aria-live="polite">
            <AnswerText text={answer.text} streaming={busy} headingLevel={5} />
          </div>
          {answer.failure ? (
            <Notice kind="error">{answer.failure}</Notice>
          ) : null}
          {answer.stopped ? <p className="meta">Stopped.</p> : null}
          {answer.usage ? (
            <p className="meta usage">
              {answer.usage.inputTokens} tokens in · {answer.usage.outputTokens}{' '}
              out · {answer.usage.credits} credits
            </p>
          ) : null}
        </section>
      ) : null}
    </section>
  );
}

function RunField({
  field,
  value,
  onChange,
  errors,
  disabled,
}: {
  field: FieldSpec;
  value: string | boolean;
  onChange: (value: string | boolean) => void;
  errors: string[];
  disabled: boolean;
}) {
  const id = `run-field-${field.name}`;
  const helpId = field.description ? `${id}-help` : undefined;
  const errorId = errors.length ? `${id}-errors` : undefined;
  const describedBy = [helpId, errorId].filter(Boolean).join(' ') || undefined;
  const common = {
    id,
    name: field.name,
    disabled,
    'aria-describedby': describedBy,
    'aria-invalid': errors.length ? true : undefined,
  };
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
      control = (
        <input
          {...common}
          type="checkbox"
          checked={value === true}
          onChange={(event) => onChange(event.target.checked)}
        />
      );
      break;
    case 'enum':
      control = (
        <select
          {...common}
          required={field.required}
          value={String(value)}
          onChange={(event) => onChange(event.target.value)}
        >
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
      control = (
        <input
          {...common}
          type="text"
          required={field.required}
          minLength={field.minLength}
          maxLength={field.maxLength}
          value={String(value)}
          onChange={(event) => onChange(event.target.value)}
        />
      );
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
  const hint =
    field.kind === 'lines'
      ? 'One per line.'
      : field.kind === 'json'
        ? 'As JSON.'
        : null;
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

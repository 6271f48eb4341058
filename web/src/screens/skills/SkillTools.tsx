import { useEffect, useState } from 'react';
import { api, unwrap } from '../../api/client';
import type { ToolInfo } from '../ToolCalls';
import { useFormAction } from '../use-form-action';
import { setSkillTools, type SkillScope } from './scope';
import { FailureNotice, type Skill } from './shared';

/** The tools the Skill's runs offer the model (its `allowed_tools`), chosen among those the person may use. */
export function SkillTools({
  scope,
  skill,
  onSaved,
}: {
  scope: SkillScope;
  skill: Skill;
  onSaved: () => Promise<void>;
}) {
  const [available, setAvailable] = useState<ToolInfo[] | null>(null);
  const [selected, setSelected] = useState<string[]>(skill.allowed_tools);
  const [saved, setSaved] = useState(false);
  useEffect(() => {
    void api
      .GET('/v1/tools')
      .then((result) => setAvailable(unwrap(result).data))
      .catch(() => setAvailable([]));
  }, []);
  const { error, busy, onSubmit } = useFormAction(async () => {
    setSaved(false);
    await setSkillTools(scope, skill.id, selected);
    await onSaved();
    setSaved(true);
  });
  // A bound tool no longer offered to this person stays listed, so it can be removed.
  const listed = [
    ...(available ?? []),
    ...skill.allowed_tools
      .filter((id) => !(available ?? []).some((tool) => tool.id === id))
      .map((id) => ({ id, title: id })),
  ];
  return (
    <section className="skills-panel" aria-labelledby="skill-tools">
      <h3 id="skill-tools">Tools</h3>
      <form className="skill-form" onSubmit={onSubmit}>
        <fieldset>
          <legend className="visually-hidden">
            Tools the Skill's runs may call
          </legend>
          {available === null ? (
            <p className="meta">Loading the tools…</p>
          ) : listed.length === 0 ? (
            <p className="meta">No tool is available to you.</p>
          ) : (
            listed.map((tool) => (
              <label key={tool.id} className="check">
                <input
                  type="checkbox"
                  checked={selected.includes(tool.id)}
                  disabled={busy}
                  onChange={(event) => {
                    setSaved(false);
                    setSelected((current) =>
                      event.target.checked
                        ? [...current, tool.id]
                        : current.filter((id) => id !== tool.id),
                    );
                  }}
                />
                {tool.title} <code>{tool.id}</code>
              </label>
            ))
          )}
        </fieldset>
        <FailureNotice error={error} />
        {saved ? <p role="status">Tools saved.</p> : null}
        <button type="submit" disabled={busy || available === null}>
          {busy ? 'Saving…' : 'Save tools'}
        </button>
      </form>
    </section>
  );
}

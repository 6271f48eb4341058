import { useMemo } from 'react';
import { useLocation } from 'wouter';
import type { ScreenProps } from '../session';
import { useOrgs } from '../org-context';
import { SkillDetail } from './skills/SkillDetail';
import { SkillList } from './skills/SkillList';
import { scopeOf } from './skills/scope';
import './skills.css';

/**
 * The Skills of the chosen space: the caller's own, or with an organization chosen in the top bar, that
 * organization's. /skills lists them (new, import, templates), /skills/{id} shows one (run, publish, export).
 */
export function SkillsScreen({ user }: ScreenProps) {
  const [path] = useLocation();
  const { current: org, ready } = useOrgs();
  const scope = useMemo(
    () => scopeOf(org, user.plan.code),
    [org, user.plan.code],
  );
  const rest = path.replace(/^\/skills\/?/, '');
  const id = rest ? decodeURIComponent(rest.split('/')[0]) : '';
  const space = org?.id ?? 'personal';
  return (
    <section className="skills" aria-labelledby="skills-heading">
      <h1 id="skills-heading">Skills</h1>
      {!ready ? (
        <p role="status">Loading…</p>
      ) : id ? (
        <SkillDetail key={`${space}-${id}`} id={id} scope={scope} />
      ) : (
        <SkillList key={space} scope={scope} />
      )}
    </section>
  );
}

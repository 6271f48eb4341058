import type { ScreenProps } from '../App';
import { usePath } from '../navigation';
import { SkillDetail } from './skills/SkillDetail';
import { SkillList } from './skills/SkillList';
import './skills.css';

/** The caller's Skills: /skills lists them (new, import, templates), /skills/{id} shows one (run, publish, export). */
export function SkillsScreen({ user }: ScreenProps) {
  const path = usePath();
  const rest = path.replace(/^\/skills\/?/, '');
  const id = rest ? decodeURIComponent(rest.split('/')[0]) : '';
  return (
    <section className="skills" aria-labelledby="skills-heading">
      <h1 id="skills-heading">Skills</h1>
      {id ? (
        <SkillDetail key={id} id={id} planCode={user.plan.code} />
      ) : (
        <SkillList />
      )}
    </section>
  );
}

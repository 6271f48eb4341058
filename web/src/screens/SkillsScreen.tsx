import type { ScreenProps } from '../App';

/** Placeholder: being built (issue 21). */
export function SkillsScreen(_props: ScreenProps) {
  return <h1>Skills</h1>;
}

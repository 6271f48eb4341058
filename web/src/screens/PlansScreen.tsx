import type { User } from '../api/client';
import type { ScreenProps } from '../App';

/** Placeholder: being built (issue 21). */
export function PlansScreen(_props: ScreenProps) {
  return <h1>Plans</h1>;
}

/** Placeholder: the credits left today, in the top bar. */
export function QuotaBadge(_props: { user: User }) {
  return null;
}

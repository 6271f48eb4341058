import type { ScreenProps } from '../App';

/** Placeholder: being built (issue 21). */
export function AccountScreen(_props: ScreenProps) {
  return <h1>Account</h1>;
}

import type { ScreenProps } from '../App';

/** Placeholder: being built (issue 21). */
export function FilesScreen(_props: ScreenProps) {
  return <h1>Files</h1>;
}

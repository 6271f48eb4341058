import { useTheme, type ThemeChoice } from '../theme';

const CHOICES: { value: ThemeChoice; label: string }[] = [
  { value: 'system', label: 'System' },
  { value: 'light', label: 'Light' },
  { value: 'dark', label: 'Dark' },
];

/** The colour theme: the system's, light or dark (remembered in this browser). */
export function ThemeToggle() {
  const [theme, setTheme] = useTheme();
  return (
    <label className="theme-toggle">
      Theme
      <select
        value={theme}
        onChange={(event) => setTheme(event.target.value as ThemeChoice)}
      >
        {CHOICES.map((choice) => (
          <option key={choice.value} value={choice.value}>
            {choice.label}
          </option>
        ))}
      </select>
    </label>
  );
}

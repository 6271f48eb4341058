/** The service's rule for a new password (register, reset, change): 12 to 128 characters. */
export const NEW_PASSWORD_LIMITS = { minLength: 12, maxLength: 128 } as const;

/** A labelled input for a new password, with the service's limits and a hint the field points to. */
export function NewPasswordInput(props: {
  label: string;
  name: string;
  value: string;
  onChange: (value: string) => void;
  hintId: string;
}) {
  return (
    <label>
      {props.label}
      <input
        type="password"
        name={props.name}
        autoComplete="new-password"
        required
        {...NEW_PASSWORD_LIMITS}
        aria-describedby={props.hintId}
        value={props.value}
        onChange={(event) => props.onChange(event.target.value)}
      />
    </label>
  );
}

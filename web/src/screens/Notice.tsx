import type { ReactNode } from 'react';

/** A message for the person: errors are announced to screen readers as they appear. */
export function Notice({
  kind,
  children,
  id,
}: {
  kind: 'error' | 'info';
  children: ReactNode;
  id?: string;
}) {
  return (
    <p
      id={id}
      className={`notice notice-${kind}`}
      role={kind === 'error' ? 'alert' : 'status'}
    >
      {children}
    </p>
  );
}

export function FieldErrors({
  fields,
}: {
  fields: { field: string; message: string }[];
}) {
  if (fields.length === 0) return null;
  return (
    <ul className="field-errors">
      {fields.map((field) => (
        <li key={field.field + field.message}>
          {field.field}: {field.message}
        </li>
      ))}
    </ul>
  );
}

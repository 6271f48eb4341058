import { useState, type ReactNode } from 'react';

export const numbers = new Intl.NumberFormat();

export const dateOf = (iso: string) =>
  new Date(iso).toLocaleDateString(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
  });

/**
 * A destructive button asked twice: the first press shows "Yes, …" and "Cancel" in its place. `label` names
 * the action for assistive technology ("Remove ada@example.com").
 */
export function ConfirmButton({
  label,
  confirmLabel,
  busyLabel,
  onConfirm,
  children,
}: {
  label: string;
  confirmLabel: string;
  busyLabel: string;
  onConfirm: () => Promise<void>;
  children: ReactNode;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  if (!asking)
    return (
      <button
        type="button"
        className="secondary"
        aria-label={label}
        onClick={() => setAsking(true)}
      >
        {children}
      </button>
    );
  return (
    <span className="org-confirm" role="group" aria-label={`Confirm: ${label}`}>
      <button
        type="button"
        className="danger"
        disabled={busy}
        onClick={() => {
          setBusy(true);
          void onConfirm().finally(() => {
            setBusy(false);
            setAsking(false);
          });
        }}
      >
        {busy ? busyLabel : confirmLabel}
      </button>
      <button
        type="button"
        className="secondary"
        disabled={busy}
        onClick={() => setAsking(false)}
      >
        Cancel
      </button>
    </span>
  );
}

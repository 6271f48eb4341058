import { useState, type FormEvent } from 'react';

/** A form's submit: busy while `action` runs, its failure kept for display, the page never reloaded. */
export function useFormAction(action: () => Promise<void>) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, onSubmit: (event: FormEvent) => void submit(event) };
}

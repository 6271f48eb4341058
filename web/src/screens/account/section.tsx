import { useId, type ReactNode } from 'react';
import { ApiFailure, describeFailure } from '../../api/client';
import { FieldErrors, Notice } from '../Notice';

export function Section({
  title,
  children,
}: {
  title: string;
  children: ReactNode;
}) {
  const id = useId();
  return (
    <section className="account-section" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  );
}

export function ErrorNotice({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <>
      <Notice kind="error">{describeFailure(error)}</Notice>
      <FieldErrors fields={error instanceof ApiFailure ? error.fields : []} />
    </>
  );
}

import { ApiFailure } from '../../api/client';
import { RouteLink } from '../AuthScreens';
import { FieldErrors, Notice } from '../Notice';
import { describeChatFailure } from './chat-failure';

/** Back from a payment provider (/billing/success or /billing/canceled). */
export function BillingReturn({
  outcome,
}: {
  outcome: 'success' | 'canceled';
}) {
  return outcome === 'success' ? (
    <Notice kind="info">
      Thank you: the payment is being confirmed, and your new plan applies as
      soon as the provider tells us.{' '}
      <RouteLink to="/plans">See your plan</RouteLink>
    </Notice>
  ) : (
    <Notice kind="info">
      The checkout was canceled and nothing was charged.{' '}
      <RouteLink to="/plans">Back to the plans</RouteLink>
    </Notice>
  );
}

/**
 * Why an answer could not start (or the conversation could not be read), in plain words, with the way on:
 * the organization's page when it has no paid plan, the plans when the person's own credits are used up.
 */
export function ChatFailure({
  error,
  orgName,
}: {
  error: unknown;
  /** The organization paying, when one is chosen. */
  orgName?: string;
}) {
  const code = error instanceof ApiFailure ? error.code : null;
  return (
    <>
      <Notice kind="error">
        {describeChatFailure(error, orgName)}
        {code === 'org_plan_required' ? (
          <>
            {' '}
            <RouteLink to="/organization">Open the organization</RouteLink>
          </>
        ) : null}
        {code === 'quota_exceeded' && !orgName ? (
          <>
            {' '}
            <RouteLink to="/plans">See the plans</RouteLink>
          </>
        ) : null}
      </Notice>
      {error instanceof ApiFailure ? (
        <FieldErrors fields={error.fields} />
      ) : null}
    </>
  );
}

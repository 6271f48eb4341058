/**
 * Every stable machine code the API answers with, and the HTTP status and title it maps to.
 * Services throw AppError(code, detail); ProblemDetailsFilter renders it. Codes never change meaning.
 * docs/adr/0006-problem-details-and-error-codes.md
 */
export const ERROR_CODES = {
  validation_failed: { status: 400, title: 'The request is not valid' },
  malformed_json: { status: 400, title: 'The request body is not valid JSON' },
  bad_request: { status: 400, title: 'Bad request' },
  forbidden_field: { status: 400, title: 'Field not accepted' },
  invalid_reset_token: { status: 400, title: 'Invalid or expired reset link' },
  invalid_verification_token: {
    status: 400,
    title: 'Invalid or expired verification link',
  },
  invalid_two_factor_code: { status: 400, title: 'Invalid two-factor code' },
  plan_not_checkoutable: {
    status: 400,
    title: 'This plan cannot be bought through checkout',
  },
  webhook_signature_invalid: {
    status: 400,
    title: 'Webhook signature not valid',
  },
  webhook_payload_invalid: {
    status: 400,
    title: 'Webhook payload not understood',
  },
  unauthenticated: { status: 401, title: 'Authentication required' },
  invalid_credentials: { status: 401, title: 'Invalid email or password' },
  two_factor_required: { status: 401, title: 'Second factor required' },
  two_factor_challenge_invalid: {
    status: 401,
    title: 'Sign-in to complete not found',
  },
  forbidden: { status: 403, title: 'Forbidden' },
  cross_site_request: { status: 403, title: 'Cross-site request refused' },
  email_unverified: { status: 403, title: 'Email not verified' },
  password_incorrect: { status: 403, title: 'Password not correct' },
  reauthentication_required: { status: 403, title: 'Sign in again first' },
  invitation_mismatch: {
    status: 403,
    title: 'The invitation is for another address',
  },
  org_role_required: {
    status: 403,
    title: 'Your role in the organization does not allow this',
  },
  org_plan_required: {
    status: 403,
    title: 'The organization has no paid plan',
  },
  not_found: { status: 404, title: 'Not found' },
  route_not_found: { status: 404, title: 'No such route' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  request_timeout: { status: 408, title: 'Request timeout' },
  conflict: { status: 409, title: 'Conflict' },
  email_taken: { status: 409, title: 'Email already registered' },
  subscription_exists: {
    status: 409,
    title: 'A subscription is already active',
  },
  last_admin: { status: 409, title: 'The last admin cannot be removed' },
  account_deleted: { status: 409, title: 'The account was deleted' },
  email_already_verified: { status: 409, title: 'Email already verified' },
  no_password: { status: 409, title: 'The account has no password' },
  two_factor_already_enabled: {
    status: 409,
    title: 'Two-factor sign-in is already on',
  },
  two_factor_not_enabled: {
    status: 409,
    title: 'Two-factor sign-in is not on',
  },
  two_factor_not_set_up: {
    status: 409,
    title: 'Two-factor sign-in is not set up',
  },
  file_not_ready: {
    status: 409,
    title: 'The file’s text is not extracted yet',
  },
  nothing_to_regenerate: { status: 409, title: 'Nothing to regenerate' },
  seats_exhausted: {
    status: 409,
    title: 'The organization has no free seat',
  },
  last_owner: {
    status: 409,
    title: 'An organization keeps at least one owner',
  },
  organization_has_subscription: {
    status: 409,
    title: 'The organization has an active subscription',
  },
  already_member: { status: 409, title: 'Already a member' },
  invitation_gone: {
    status: 410,
    title: 'The invitation was used, revoked or has expired',
  },
  conversation_deleted: { status: 410, title: 'The conversation was deleted' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  rate_limited: { status: 429, title: 'Too many requests' },
  request_header_too_large: {
    status: 431,
    title: 'Request header fields too large',
  },
  unknown_model: { status: 400, title: 'Unknown model' },
  model_not_allowed: { status: 403, title: 'Model not included in your plan' },
  storage_quota_exceeded: { status: 413, title: 'Storage quota exceeded' },
  messages_too_large: { status: 413, title: 'Messages too large' },
  input_invalid: {
    status: 422,
    title: 'Input does not match the Skill input schema',
  },
  idempotency_key_reused: {
    status: 422,
    title: 'Idempotency key reused with a different request',
  },
  file_text_failed: { status: 422, title: 'The file has no usable text' },
  quota_exceeded: { status: 429, title: 'Daily quota exceeded' },
  provider_error: { status: 502, title: 'The model provider failed' },
  provider_timeout: { status: 502, title: 'The model provider timed out' },
  generation_interrupted: { status: 502, title: 'The answer was interrupted' },
  payment_provider_error: { status: 502, title: 'The payment provider failed' },
  internal_error: { status: 500, title: 'Internal server error' },
  not_ready: { status: 503, title: 'Service not ready' },
  service_unavailable: { status: 503, title: 'Service unavailable' },
  overloaded: { status: 503, title: 'Too busy right now' },
  storage_unavailable: { status: 503, title: 'Storage unavailable' },
  payment_provider_unavailable: {
    status: 503,
    title: 'The payment provider cannot be reached',
  },
  provider_not_configured: { status: 503, title: 'Provider not configured' },
  webhook_not_processed: {
    status: 503,
    title: 'Webhook not processed; deliver it again',
  },
  // --- organization billing: seats and admin-set plans (issue 30) ---
  plan_not_for_organizations: {
    status: 400,
    title: 'This plan is not sold to organizations',
  },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The code used for an HTTP status that reached the filter without a code of its own (framework errors). */
export function codeForStatus(status: number): ErrorCode {
  const byStatus: Record<number, ErrorCode> = {
    400: 'bad_request',
    401: 'unauthenticated',
    403: 'forbidden',
    404: 'not_found',
    405: 'method_not_allowed',
    409: 'conflict',
    413: 'payload_too_large',
    415: 'unsupported_media_type',
    429: 'rate_limited',
    503: 'service_unavailable',
  };
  return byStatus[status] ?? (status >= 500 ? 'internal_error' : 'bad_request');
}

/** Placeholders: being built (issue 21). */
export function ForgotPasswordScreen() {
  return <h1>Forgot password</h1>;
}

export function ResetPasswordScreen() {
  return <h1>Reset password</h1>;
}

export function VerifyEmailScreen(_props: { onVerified: () => Promise<void> }) {
  return <h1>Verify email</h1>;
}

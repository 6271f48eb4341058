import { useState } from 'react';
import type { ScreenProps } from '../session';
import { DataSection, DeleteSection } from './account/DataSections';
import { EmailSection } from './account/EmailSection';
import { PasswordSection } from './account/PasswordSection';
import { SessionsSection } from './account/SessionsSection';
import { TwoFactorSection } from './account/TwoFactorSection';
import './account.css';

/** The signed-in person's account: email, password, two-factor sign-in, sessions, their data, deletion. */
export function AccountScreen({ user, refreshUser }: ScreenProps) {
  // Bumped when a change ends other sessions (a new password), so the list is read again.
  const [sessionsVersion, setSessionsVersion] = useState(0);
  return (
    <div className="account">
      <h1>Account</h1>
      <EmailSection email={user.email} verified={user.emailVerified} />
      <PasswordSection
        onChanged={() => setSessionsVersion((version) => version + 1)}
      />
      <TwoFactorSection
        enabled={user.twoFactorEnabled}
        refreshUser={refreshUser}
      />
      <SessionsSection key={sessionsVersion} />
      <DataSection />
      <DeleteSection refreshUser={refreshUser} />
    </div>
  );
}

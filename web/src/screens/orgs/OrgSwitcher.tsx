import { useId } from 'react';
import { navigate } from '../../navigation';
import { useOrgs } from '../../org-context';

/**
 * Personal or one of the person's organizations, in the top bar: decides whose Skills the Skills screen
 * shows and which pool pays for a chat. Shown once the person belongs to an organization.
 */
export function OrgSwitcher() {
  const { orgs, current, select } = useOrgs();
  const id = useId();
  if (!orgs || orgs.length === 0) return null;
  return (
    <span className="org-switcher">
      <label htmlFor={id}>Organization</label>
      <select
        id={id}
        value={current?.id ?? ''}
        onChange={(event) => {
          select(event.target.value || null);
          // A Skill belongs to one owner: its page means nothing in another organization.
          if (window.location.pathname.startsWith('/skills/'))
            navigate('/skills');
        }}
      >
        <option value="">Personal</option>
        {orgs.map((org) => (
          <option key={org.id} value={org.id}>
            {org.name}
          </option>
        ))}
      </select>
    </span>
  );
}

// The organization a new resource belongs to: the caller's own, or for a platform caller
// the organization picked in the header (changeable here).
import { useQuery } from '@tanstack/react-query';
import { useEffect } from 'react';
import { api, call } from '../api/client';
import { useSession } from '../session';
import { Field } from './kit';

export function useOrganizations() {
  const { profile } = useSession();
  return useQuery({
    queryKey: ['organizations', 'picker'],
    queryFn: () => call(api.GET('/api/organizations/', { params: { query: { page: 1, size: 200 } } })),
    enabled: profile.global,
  });
}

export function OrgSelect({
  value,
  onChange,
  allowGlobal = false,
}: {
  value: number | null;
  onChange: (id: number | null) => void;
  allowGlobal?: boolean;
}) {
  const session = useSession();
  const orgs = useOrganizations();
  useEffect(() => {
    if (value === null && !allowGlobal)
      onChange(session.organizationId ?? session.profile.organization_id ?? orgs.data?.[0]?.id ?? null);
  }, [value, allowGlobal, onChange, session.organizationId, session.profile.organization_id, orgs.data]);
  if (!session.profile.global) return null;
  return (
    <Field label="Organization">
      {(id) => (
        <select
          id={id}
          required={!allowGlobal}
          value={value ?? ''}
          onChange={(e) => onChange(e.target.value === '' ? null : Number(e.target.value))}
        >
          {allowGlobal ? (
            <option value="">Global (every organization)</option>
          ) : (
            <option value="" disabled>
              Choose…
            </option>
          )}
          {(orgs.data ?? []).map((o) => (
            <option key={o.id} value={o.id}>
              {o.name}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

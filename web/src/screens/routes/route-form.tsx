// Create or edit a route: name, destinations, the condition (the one condition language, as
// JSON; the API checks it and answers a 422 naming the problem), enabled and final.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, call, type Ok } from '../../api/client';
import { useOrgFilter } from '../../session';
import { ConditionStatus, useConditionCheck } from '../../ui/condition-check';
import { ErrorNote, Field } from '../../ui/kit';
import { OrgSelect } from '../../ui/org-select';

type Route = Ok<'routes.get'>;

export function RouteForm({ route, onDone }: { route?: Route; onDone: () => void }) {
  const client = useQueryClient();
  const org = useOrgFilter();
  const [name, setName] = useState(route?.name ?? '');
  const [organizationId, setOrganizationId] = useState<number | null>(route?.organization_id ?? null);
  const [destinations, setDestinations] = useState<string[]>(route?.destination_ids ?? []);
  const [condition, setCondition] = useState(route?.condition ? JSON.stringify(route.condition, null, 2) : '');
  const [enabled, setEnabled] = useState(route?.enabled ?? true);
  const [final, setFinal] = useState(route?.final ?? false);
  const [comment, setComment] = useState('');
  const available = useQuery({
    queryKey: ['destinations', 'all', org],
    queryFn: () => call(api.GET('/api/collectors/destinations', { params: { query: { ...org, limit: 200 } } })),
  });

  // The condition is checked as it is typed (ui/condition-check.tsx).
  const owner = route?.organization_id ?? organizationId ?? org.organization_id;
  const check = useConditionCheck(condition, owner);
  const { parsed, syntax } = check;

  const save = useMutation({
    mutationFn: () => {
      const fields = {
        name,
        destination_ids: destinations,
        condition: parsed,
        enabled,
        final,
        ...(comment ? { comment } : {}),
      };
      return route
        ? call(api.PUT('/api/collectors/routes/{route_id}', { params: { path: { route_id: route.id } }, body: fields }))
        : call(api.POST('/api/collectors/routes', { body: { ...fields, organization_id: organizationId ?? 0 } }));
    },
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: ['routes'] });
      onDone();
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!syntax) save.mutate();
  };
  return (
    <form onSubmit={submit} aria-label={route ? `Edit route ${route.name}` : 'New route'}>
      <Field label="Name">
        {(id) => <input id={id} required value={name} onChange={(e) => setName(e.target.value)} />}
      </Field>
      {route ? null : <OrgSelect value={organizationId} onChange={setOrganizationId} />}
      <fieldset>
        <legend>Destinations</legend>
        {(available.data?.items ?? []).map((d) => (
          <label key={d.id} className="check">
            <input
              type="checkbox"
              checked={destinations.includes(d.id)}
              onChange={(e) =>
                setDestinations(e.target.checked ? [...destinations, d.id] : destinations.filter((x) => x !== d.id))
              }
            />{' '}
            {d.name} ({d.type})
          </label>
        ))}
        {available.data?.items.length === 0 ? <p className="empty">No destination yet: create one first.</p> : null}
      </fieldset>
      <Field
        label="Condition"
        hint='Empty: every event. Otherwise JSON, e.g. {"field": "class_uid", "op": "eq", "value": 3002}; see docs/conditions.md.'
      >
        {(id, hint) => (
          <textarea
            id={id}
            aria-describedby={hint}
            rows={6}
            spellCheck={false}
            value={condition}
            onChange={(e) => setCondition(e.target.value)}
          />
        )}
      </Field>
      <ConditionStatus check={check} />
      <div className="row">
        <label>
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> Enabled
        </label>
        <label>
          <input type="checkbox" checked={final} onChange={(e) => setFinal(e.target.checked)} /> Final (later routes are
          not tried)
        </label>
      </div>
      {route ? (
        <Field label="Comment (kept with the version)">
          {(id) => <input id={id} value={comment} onChange={(e) => setComment(e.target.value)} />}
        </Field>
      ) : null}
      <ErrorNote error={save.error} />
      <button type="submit" className="primary" disabled={save.isPending || syntax !== undefined}>
        {route ? 'Save' : 'Create route'}
      </button>
    </form>
  );
}

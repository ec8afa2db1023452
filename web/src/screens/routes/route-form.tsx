// Create or edit a route: name, destinations, the condition (the one condition language in its
// text form; the API checks it and answers a 422 naming the problem and where), the transforms,
// enabled and final. A route saved where an earlier final route shadows it (or shadowing later
// ones) keeps the dialog open with the API's warning.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, call, type Ok } from '../../api/client';
import { useOrgFilter } from '../../session';
import { ConditionEditor, conditionText, useConditionCheck } from '../../ui/condition-check';
import { ErrorNote, Field } from '../../ui/kit';
import { OrgSelect } from '../../ui/org-select';
import { transformRows, transformsOf, TransformsEditor, useTransformsCheck } from './transforms';

export type RouteWarning = NonNullable<Route['warnings']>[number];

/** The warnings of a route, each naming the other route (data-testid route-warnings). */
export function RouteWarnings({ warnings }: { warnings: RouteWarning[] | undefined }) {
  if (!warnings?.length) return null;
  return (
    <div className="warning" role="status" data-testid="route-warnings">
      {warnings.map((w) => (
        <p key={`${w.code}-${w.route_id}`}>
          <span className="badge warn">{w.code === 'route.unreachable' ? 'unreachable' : 'shadows'}</span> {w.message}
        </p>
      ))}
    </div>
  );
}

type Route = Ok<'routes.get'>;

export function RouteForm({ route, onDone }: { route?: Route; onDone: () => void }) {
  const client = useQueryClient();
  const org = useOrgFilter();
  const [name, setName] = useState(route?.name ?? '');
  const [organizationId, setOrganizationId] = useState<number | null>(route?.organization_id ?? null);
  const [destinations, setDestinations] = useState<string[]>(route?.destination_ids ?? []);
  const [condition, setCondition] = useState(conditionText(route?.condition, route?.condition_text));
  const [transforms, setTransforms] = useState(transformRows(route?.transforms));
  const [saved, setSaved] = useState<Route>();
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
  const transformsCheck = useTransformsCheck(transforms, owner);

  const save = useMutation({
    mutationFn: () => {
      const fields = {
        name,
        destination_ids: destinations,
        condition: parsed,
        transforms: transformsOf(transforms),
        enabled,
        final,
        ...(comment ? { comment } : {}),
      };
      return route
        ? call(api.PUT('/api/collectors/routes/{route_id}', { params: { path: { route_id: route.id } }, body: fields }))
        : call(api.POST('/api/collectors/routes', { body: { ...fields, organization_id: organizationId ?? 0 } }));
    },
    onSuccess: async (result) => {
      await client.invalidateQueries({ queryKey: ['routes'] });
      // Saved, but the order makes a route useless: say so before closing.
      if (result.warnings?.length) setSaved(result);
      else onDone();
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!syntax && !transformsCheck.invalid) save.mutate();
  };
  if (saved)
    return (
      <div>
        <p className="notice">
          Route {saved.name} saved (position {saved.position}), with a warning:
        </p>
        <RouteWarnings warnings={saved.warnings} />
        <button type="button" className="primary" onClick={onDone}>
          Close
        </button>
      </div>
    );
  return (
    <form onSubmit={submit} aria-label={route ? `Edit route ${route.name}` : 'New route'}>
      <RouteWarnings warnings={route?.warnings} />
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
      <ConditionEditor value={condition} onChange={setCondition} check={check} empty="every event" />
      <TransformsEditor rows={transforms} onChange={setTransforms} check={transformsCheck} />
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
      <button
        type="submit"
        className="primary"
        disabled={save.isPending || syntax !== undefined || transformsCheck.invalid}
      >
        {route ? 'Save' : 'Create route'}
      </button>
    </form>
  );
}

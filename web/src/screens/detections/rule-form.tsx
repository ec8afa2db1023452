// Create or edit a detection rule: the condition (the one condition language in its text
// form, checked as it is typed like a route's), the severity, MITRE ATT&CK, the fields that make a
// group, a threshold per group and window, and suppression. The API checks the definition
// whole and names the problem (`definition.threshold.count: ...`), shown under the form.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, call, type Ok } from '../../api/client';
import { useOrgFilter } from '../../session';
import { ConditionEditor, conditionText, useConditionCheck } from '../../ui/condition-check';
import { ErrorNote, Field } from '../../ui/kit';
import { OrgSelect } from '../../ui/org-select';
import { SEVERITIES } from './labels';

export type Rule = Ok<'detection_rules.get'>;

interface Definition {
  title?: string;
  description?: string;
  condition?: unknown;
  severity_id?: number;
  mitre?: { tactics?: string[]; techniques?: string[] };
  group_by?: string[];
  threshold?: { count: number; window_seconds: number };
  suppression_seconds?: number;
  origin?: Record<string, unknown>;
}

const list = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

export function RuleForm({ rule, onDone }: { rule?: Rule; onDone: () => void }) {
  const client = useQueryClient();
  const org = useOrgFilter();
  const def = (rule?.definition ?? {}) as Definition;
  const [name, setName] = useState(rule?.name ?? '');
  const [organizationId, setOrganizationId] = useState<number | null>(rule?.organization_id ?? null);
  const [enabled, setEnabled] = useState(rule?.enabled ?? true);
  const [title, setTitle] = useState(def.title ?? '');
  const [description, setDescription] = useState(def.description ?? '');
  const [condition, setCondition] = useState(conditionText(def.condition, rule?.condition_text));
  const [severity, setSeverity] = useState(def.severity_id ?? 3);
  const [tactics, setTactics] = useState((def.mitre?.tactics ?? []).join(', '));
  const [techniques, setTechniques] = useState((def.mitre?.techniques ?? []).join(', '));
  const [groupBy, setGroupBy] = useState((def.group_by ?? []).join(', '));
  const [count, setCount] = useState(def.threshold ? String(def.threshold.count) : '');
  const [windowSeconds, setWindowSeconds] = useState(def.threshold ? String(def.threshold.window_seconds) : '');
  const [suppression, setSuppression] = useState(
    def.suppression_seconds !== undefined ? String(def.suppression_seconds) : '',
  );
  const [comment, setComment] = useState('');

  const owner = rule?.organization_id ?? organizationId ?? org.organization_id;
  const check = useConditionCheck(condition, owner);

  const save = useMutation({
    mutationFn: () => {
      const definition: Definition = {
        ...(def.origin ? { origin: def.origin } : {}),
        ...(title.trim() ? { title: title.trim() } : {}),
        ...(description.trim() ? { description: description.trim() } : {}),
        condition: check.parsed,
        severity_id: severity,
        ...(list(tactics).length || list(techniques).length
          ? { mitre: { tactics: list(tactics), techniques: list(techniques) } }
          : {}),
        ...(list(groupBy).length ? { group_by: list(groupBy) } : {}),
        ...(count || windowSeconds
          ? { threshold: { count: Number(count), window_seconds: Number(windowSeconds) } }
          : {}),
        ...(suppression ? { suppression_seconds: Number(suppression) } : {}),
      };
      const body = { name, enabled, definition, ...(comment ? { comment } : {}) };
      return rule
        ? call(api.PUT('/api/detections/rules/{rule_id}', { params: { path: { rule_id: rule.id } }, body }))
        : call(api.POST('/api/detections/rules', { body: { ...body, ...(owner ? { organization_id: owner } : {}) } }));
    },
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: ['detection-rules'] });
      onDone();
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!check.syntax) save.mutate();
  };
  return (
    <form onSubmit={submit} aria-label={rule ? `Edit rule ${rule.name}` : 'New detection rule'}>
      <Field label="Name">
        {(id) => <input id={id} required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />}
      </Field>
      {rule ? null : <OrgSelect value={organizationId} onChange={setOrganizationId} />}
      <Field label="Finding title" hint="Default: the rule's name">
        {(id, hint) => (
          <input
            id={id}
            aria-describedby={hint}
            maxLength={300}
            value={title}
            onChange={(e) => setTitle(e.target.value)}
          />
        )}
      </Field>
      <Field label="Description">
        {(id) => <textarea id={id} rows={2} value={description} onChange={(e) => setDescription(e.target.value)} />}
      </Field>
      <ConditionEditor value={condition} onChange={setCondition} check={check} required />
      <div className="row">
        <Field label="Severity">
          {(id) => (
            <select id={id} value={severity} onChange={(e) => setSeverity(Number(e.target.value))}>
              {SEVERITIES.map(([n, label]) => (
                <option key={n} value={n}>
                  {label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="MITRE tactics" hint="e.g. TA0006">
          {(id, hint) => (
            <input id={id} aria-describedby={hint} value={tactics} onChange={(e) => setTactics(e.target.value)} />
          )}
        </Field>
        <Field label="MITRE techniques" hint="e.g. T1110, T1110.001">
          {(id, hint) => (
            <input id={id} aria-describedby={hint} value={techniques} onChange={(e) => setTechniques(e.target.value)} />
          )}
        </Field>
      </div>
      <fieldset>
        <legend>Threshold and suppression (optional)</legend>
        <div className="row">
          <Field label="Group by" hint="Fields, comma separated: one count and one suppression per group">
            {(id, hint) => (
              <input
                id={id}
                aria-describedby={hint}
                placeholder="actor.user.name"
                value={groupBy}
                onChange={(e) => setGroupBy(e.target.value)}
              />
            )}
          </Field>
          <Field label="At least (events)">
            {(id) => <input id={id} type="number" min={1} value={count} onChange={(e) => setCount(e.target.value)} />}
          </Field>
          <Field label="Within (seconds)">
            {(id) => (
              <input
                id={id}
                type="number"
                min={1}
                value={windowSeconds}
                onChange={(e) => setWindowSeconds(e.target.value)}
              />
            )}
          </Field>
          <Field label="Suppress for (seconds)" hint="No new finding for the same group meanwhile">
            {(id, hint) => (
              <input
                id={id}
                aria-describedby={hint}
                type="number"
                min={0}
                value={suppression}
                onChange={(e) => setSuppression(e.target.value)}
              />
            )}
          </Field>
        </div>
      </fieldset>
      <label>
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} /> Enabled
      </label>
      <Field label="Comment (kept with the version)">
        {(id) => <input id={id} maxLength={1000} value={comment} onChange={(e) => setComment(e.target.value)} />}
      </Field>
      <ErrorNote error={save.error} />
      <button type="submit" className="primary" disabled={save.isPending || check.syntax !== undefined}>
        {rule ? 'Save rule' : 'Create rule'}
      </button>
    </form>
  );
}

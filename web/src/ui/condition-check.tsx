// A condition edited in the text form of the one condition language (docs/conditions.md, the
// language of searches: `class_uid = 3002 and status_id = 2`), checked as it is typed: a moment
// later, the API's own check, by a dry run of the condition as a draft route on an empty event.
// The API parses the text (one parser, server-side) and answers a syntax error with its line
// and column, an unknown field with the closest known one. A condition may also be pasted as
// JSON (text starting with "{"): JSON syntax is checked at once, and the tree is sent as it is.
// Used by the route form and the detection rule form.
import { useQuery } from '@tanstack/react-query';
import { api, call, type ApiError } from '../api/client';
import { useDebounced } from './debounce';
import { Field } from './kit';

export interface ConditionCheck {
  /** What to send as the condition: the text, the JSON tree, or null when empty; undefined when the JSON does not parse. */
  parsed: unknown;
  /** The JSON syntax error, if any (checked locally, at once). */
  syntax?: string;
  /** The API's refusal, if any. */
  error?: ApiError | null;
  accepted: boolean;
}

/** The text to edit for a stored condition: its text form from the API, else its JSON. */
export function conditionText(condition: unknown, text: string | null | undefined): string {
  if (text) return text;
  if (condition === null || condition === undefined) return '';
  return typeof condition === 'string' ? condition : JSON.stringify(condition, null, 2);
}

export function useConditionCheck(text: string, organizationId: number | null | undefined): ConditionCheck {
  let parsed: unknown = null;
  let syntax: string | undefined;
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    try {
      parsed = JSON.parse(trimmed);
    } catch (err) {
      parsed = undefined;
      syntax = `Condition JSON: ${(err as Error).message}`;
    }
  } else if (trimmed !== '') parsed = text;
  // Debounced as its JSON text: a string keeps its identity across renders, a parsed tree does not.
  const key = syntax || parsed === null ? undefined : JSON.stringify(parsed);
  const draft = useDebounced(key, 400);
  const check = useQuery<unknown, ApiError>({
    queryKey: ['condition-check', organizationId, draft],
    queryFn: () =>
      call(
        api.POST('/api/collectors/routes/dry-run', {
          body: {
            events: [{}],
            routes: [{ condition: JSON.parse(draft!) as unknown }],
            ...(organizationId ? { organization_id: organizationId } : {}),
          },
        }),
      ),
    enabled: draft !== undefined,
    retry: false,
  });
  const current = draft === key;
  return {
    parsed,
    ...(syntax ? { syntax } : {}),
    error: current ? check.error : null,
    accepted: parsed !== null && parsed !== undefined && !syntax && current && check.isSuccess,
  };
}

/** The check's verdict, announced politely (data-testid condition-check). */
export function ConditionStatus({ check }: { check: ConditionCheck }) {
  return (
    <div role="status" aria-live="polite" data-testid="condition-check">
      {check.syntax ? (
        <p className="error">{check.syntax}</p>
      ) : check.error ? (
        // The draft is routes[0] of the dry run: name the condition only.
        <p className="error">{check.error.message.replace(/^routes\[0\]\./, '')}</p>
      ) : check.accepted ? (
        <p className="notice">Condition accepted.</p>
      ) : null}
    </div>
  );
}

/** The condition's text area, with the language's hint and the check's verdict under it. */
export function ConditionEditor({
  value,
  onChange,
  check,
  required,
  empty,
}: {
  value: string;
  onChange: (text: string) => void;
  check: ConditionCheck;
  required?: boolean;
  /** What an empty condition means, for the hint ("every event"). */
  empty?: string;
}) {
  return (
    <>
      <Field
        label="Condition"
        hint={
          `${empty ? `Empty: ${empty}. ` : ''}The search language, e.g. class_uid = 3002 and status_id = 2 and ` +
          'src_endpoint.ip cidr 10.0.0.0/8; operators =, !=, >, in (a, b), exists, contains, startswith, ~ "glob*", ' +
          'matches, cidr, nocase; and, or, not. JSON is accepted too. See docs/conditions.md.'
        }
      >
        {(id, hint) => (
          <textarea
            id={id}
            aria-describedby={hint}
            required={required}
            rows={4}
            spellCheck={false}
            value={value}
            onChange={(e) => onChange(e.target.value)}
          />
        )}
      </Field>
      <ConditionStatus check={check} />
    </>
  );
}

// A condition (the one condition language, as JSON) checked as it is typed: JSON syntax at
// once, then, a moment later, the API's own check, by a dry run of the condition as a draft
// route on an empty event. An unknown field or operator comes back as the API's detail (with
// the closest known field). Used by the route form and the detection rule form.
import { useQuery } from '@tanstack/react-query';
import { api, call, type ApiError } from '../api/client';
import { useDebounced } from './debounce';

export interface ConditionCheck {
  /** The parsed condition: null when the text is empty, undefined when it is not JSON. */
  parsed: unknown;
  /** The JSON syntax error, if any (checked locally, at once). */
  syntax?: string;
  /** The API's refusal, if any. */
  error?: ApiError | null;
  accepted: boolean;
}

export function useConditionCheck(text: string, organizationId: number | null | undefined): ConditionCheck {
  let parsed: unknown = null;
  let syntax: string | undefined;
  try {
    parsed = text.trim() === '' ? null : JSON.parse(text);
  } catch (err) {
    parsed = undefined;
    syntax = `Condition JSON: ${(err as Error).message}`;
  }
  const draft = useDebounced(syntax ? undefined : parsed, 400);
  const check = useQuery<unknown, ApiError>({
    queryKey: ['condition-check', organizationId, JSON.stringify(draft)],
    queryFn: () =>
      call(
        api.POST('/api/collectors/routes/dry-run', {
          body: {
            events: [{}],
            routes: [{ condition: draft }],
            ...(organizationId ? { organization_id: organizationId } : {}),
          },
        }),
      ),
    enabled: draft !== undefined && draft !== null,
  });
  return {
    parsed,
    ...(syntax ? { syntax } : {}),
    error: check.error,
    accepted: parsed !== null && parsed !== undefined && !syntax && check.isSuccess,
  };
}

/** The check's verdict, announced politely (data-testid condition-check). */
export function ConditionStatus({ check }: { check: ConditionCheck }) {
  return (
    <div role="status" aria-live="polite" data-testid="condition-check">
      {check.syntax ? (
        <p className="error">{check.syntax}</p>
      ) : check.error ? (
        <p className="error">{check.error.message}</p>
      ) : check.accepted ? (
        <p className="notice">Condition accepted.</p>
      ) : null}
    </div>
  );
}

// The document's test cases (docs/mappings.md, Test cases) run on demand, without publishing:
// POST /api/mappings/test-cases with the draft in the editor. Pass or fail per case; each
// failure is the API's line, shown as a diff (expected, then what the mapping made).
import { useMutation } from '@tanstack/react-query';
import { api, call } from '../../api/client';
import { Badge, ErrorNote } from '../../ui/kit';

const FAILURE = /^(.+?): expected (.+), got (.+)$/;

function Failure({ text }: { text: string }) {
  const m = FAILURE.exec(text);
  if (!m) return <li>{text}</li>;
  return (
    <li>
      <code>{m[1]}</code>
      <span className="diff-remove"> − expected {m[2]}</span>
      <span className="diff-add"> + got {m[3]}</span>
    </li>
  );
}

export function TestCases({ document }: { document: Record<string, unknown> | undefined }) {
  const run = useMutation({
    mutationFn: (doc: Record<string, unknown>) =>
      call(api.POST('/api/mappings/test-cases', { body: { document: doc } })),
  });
  const cases = Array.isArray(document?.tests) ? document.tests.length : 0;
  return (
    <section aria-labelledby="test-cases">
      <h3 id="test-cases">Test cases</h3>
      <div className="row">
        <button type="button" disabled={!document || run.isPending} onClick={() => document && run.mutate(document)}>
          Run test cases
        </button>
        <span className="hint">
          {cases
            ? `${cases} case(s) in the document's "tests"`
            : 'The document has no "tests" yet (docs/mappings.md, Test cases).'}
        </span>
      </div>
      <ErrorNote error={run.error} />
      {run.data ? (
        <div data-testid="test-cases">
          <p role="status" className={run.data.failed ? 'error' : 'notice'}>
            {run.data.total === 0
              ? 'No test case to run.'
              : `${run.data.passed} of ${run.data.total} test cases pass${run.data.failed ? `, ${run.data.failed} fail` : ''}.`}
          </p>
          <ul aria-label="Test case results" className="cases">
            {run.data.results.map((r) => (
              <li key={r.index}>
                <Badge value={r.ok ? 'passed' : 'failed'} /> {r.name} <span className="hint">/tests/{r.index}</span>
                {r.failures.length ? (
                  <ul aria-label={`Why "${r.name}" fails`}>
                    {r.failures.map((f, i) => (
                      <Failure key={i} text={f} />
                    ))}
                  </ul>
                ) : null}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </section>
  );
}

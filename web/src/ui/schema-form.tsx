// A form from a JSON Schema of an object (integration config, destination config): strings,
// numbers, booleans, enums, lists and nested objects. A `writeOnly` field is a secret: a
// password input never filled from a stored value; left empty on an edit, it keeps the
// stored secret (the API's `{configured: true}` placeholder is sent back).
import { Field } from './kit';

export type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  description?: string;
  title?: string;
  writeOnly?: boolean;
  default?: unknown;
  format?: string;
};
type Value = Record<string, unknown>;

const typeOf = (s: JsonSchema): string =>
  Array.isArray(s.type) ? (s.type.find((t) => t !== 'null') ?? 'string') : (s.type ?? 'string');
const isConfigured = (v: unknown) => typeof v === 'object' && v !== null && (v as Value).configured === true;

export function SchemaForm({
  schema,
  value,
  onChange,
  prefix = '',
}: {
  schema: JsonSchema;
  value: Value;
  onChange: (v: Value) => void;
  prefix?: string;
}) {
  const required = new Set(schema.required ?? []);
  return (
    <>
      {Object.entries(schema.properties ?? {}).map(([name, sub]) => {
        const label = `${sub.title ?? name.replace(/_/g, ' ')}${required.has(name) ? ' (required)' : ''}`;
        const current = value[name];
        const set = (v: unknown) => {
          const next = { ...value };
          if (v === undefined || v === '') delete next[name];
          else next[name] = v;
          onChange(next);
        };
        const kind = typeOf(sub);
        if (kind === 'object' && sub.properties) {
          return (
            <fieldset key={name}>
              <legend>{label}</legend>
              <SchemaForm
                schema={sub}
                value={(current as Value) ?? {}}
                onChange={(v) => set(Object.keys(v).length ? v : undefined)}
                prefix={`${prefix}${name}.`}
              />
            </fieldset>
          );
        }
        if (kind === 'boolean') {
          return (
            <div className="field" key={name}>
              <label>
                <input
                  type="checkbox"
                  checked={current === undefined ? sub.default === true : current === true}
                  onChange={(e) => set(e.target.checked)}
                />{' '}
                {label}
              </label>
              {sub.description ? <small className="hint">{sub.description}</small> : null}
            </div>
          );
        }
        return (
          <Field
            key={name}
            label={label}
            hint={
              sub.writeOnly
                ? `${sub.description ?? ''} Write-only: never shown again${isConfigured(current) ? '; leave empty to keep the stored value' : ''}.`
                : sub.description
            }
          >
            {(id, hint) => {
              if (sub.enum) {
                return (
                  <select
                    id={id}
                    aria-describedby={hint}
                    value={current === undefined ? '' : String(current)}
                    onChange={(e) =>
                      set(e.target.value === '' ? undefined : sub.enum?.find((x) => String(x) === e.target.value))
                    }
                  >
                    <option value="">
                      {sub.default !== undefined ? `(default: ${String(sub.default)})` : '(none)'}
                    </option>
                    {sub.enum.map((x) => (
                      <option key={String(x)} value={String(x)}>
                        {String(x)}
                      </option>
                    ))}
                  </select>
                );
              }
              if (kind === 'array') {
                return (
                  <input
                    id={id}
                    aria-describedby={hint}
                    placeholder="comma-separated"
                    value={Array.isArray(current) ? current.join(', ') : ''}
                    onChange={(e) => {
                      const items = e.target.value
                        .split(',')
                        .map((x) => x.trim())
                        .filter(Boolean);
                      set(
                        items.length
                          ? typeOf(sub.items ?? {}) === 'integer' || typeOf(sub.items ?? {}) === 'number'
                            ? items.map(Number)
                            : items
                          : undefined,
                      );
                    }}
                  />
                );
              }
              if (kind === 'integer' || kind === 'number') {
                return (
                  <input
                    id={id}
                    aria-describedby={hint}
                    type="number"
                    placeholder={sub.default !== undefined ? String(sub.default) : undefined}
                    value={typeof current === 'number' ? current : ''}
                    onChange={(e) => set(e.target.value === '' ? undefined : Number(e.target.value))}
                  />
                );
              }
              if (sub.writeOnly) {
                return (
                  <input
                    id={id}
                    aria-describedby={hint}
                    type="password"
                    autoComplete="new-password"
                    value={typeof current === 'string' ? current : ''}
                    onChange={(e) =>
                      set(e.target.value === '' ? (isConfigured(current) ? current : undefined) : e.target.value)
                    }
                  />
                );
              }
              return (
                <input
                  id={id}
                  aria-describedby={hint}
                  type={sub.format === 'uri' ? 'url' : 'text'}
                  placeholder={sub.default !== undefined ? String(sub.default) : undefined}
                  value={typeof current === 'string' ? current : ''}
                  onChange={(e) => set(e.target.value)}
                />
              );
            }}
          </Field>
        );
      })}
    </>
  );
}

// A new token's value, shown once with a copy button.
export function TokenOnce({ token }: { token: string }) {
  return (
    <div className="panel" role="status">
      <p>Shown once: copy it now. Weir keeps only a keyed hash and the first 12 characters.</p>
      <p className="secret" data-testid="new-token">
        {token}
      </p>
      <button type="button" onClick={() => void navigator.clipboard?.writeText(token)}>
        Copy
      </button>
    </div>
  );
}

// The event store's searched columns (docs/search.md): besides the whole event, the store keeps
// the values of the fields searches filter and count on most in columns of their own, so a
// filter on an address or a top 10 of user names reads one narrow column instead of parsing
// every stored event. The pass reads them from the in-memory event it already has (no second
// parse). A column holds the value's JSON text (JSON.stringify of the value: "10.0.0.1" with
// its quotes, 443, true, a list or object), or null when the field is absent or null, so a
// query reads exactly the value the event holds, types included.

/** Searched fields: OCSF paths present across many classes (network, identity, endpoint, findings). */
export const STORED_COLUMNS: readonly { readonly path: string; readonly column: string }[] = [
  { path: 'src_endpoint.ip', column: 'h_src_ip' },
  { path: 'dst_endpoint.ip', column: 'h_dst_ip' },
  { path: 'src_endpoint.port', column: 'h_src_port' },
  { path: 'dst_endpoint.port', column: 'h_dst_port' },
  { path: 'src_endpoint.hostname', column: 'h_src_hostname' },
  { path: 'dst_endpoint.hostname', column: 'h_dst_hostname' },
  { path: 'device.hostname', column: 'h_device_hostname' },
  { path: 'device.ip', column: 'h_device_ip' },
  { path: 'actor.user.name', column: 'h_actor_user_name' },
  { path: 'user.name', column: 'h_user_name' },
  { path: 'actor.process.name', column: 'h_actor_process_name' },
  { path: 'process.name', column: 'h_process_name' },
  { path: 'metadata.product.name', column: 'h_product_name' },
  { path: 'metadata.product.vendor_name', column: 'h_vendor_name' },
  { path: 'type_uid', column: 'h_type_uid' },
  { path: 'status_id', column: 'h_status_id' },
  { path: 'disposition_id', column: 'h_disposition_id' },
  { path: 'file.name', column: 'h_file_name' },
];

const SPLIT = STORED_COLUMNS.map((c) => c.path.split('.'));

/** The searched columns' values of one event, in STORED_COLUMNS order. */
export function storedColumnValues(event: Record<string, unknown>): (string | null)[] {
  const out = new Array<string | null>(SPLIT.length);
  for (let k = 0; k < SPLIT.length; k++) {
    let v: unknown = event;
    for (const key of SPLIT[k]!) {
      if (v === null || typeof v !== 'object' || Array.isArray(v)) {
        v = undefined;
        break;
      }
      v = (v as Record<string, unknown>)[key];
    }
    out[k] = v === undefined || v === null ? null : JSON.stringify(v);
  }
  return out;
}

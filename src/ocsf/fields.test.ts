import { describe, expect, it } from 'vitest';
import { ocsfCatalog } from './catalog.js';
import { createFieldIndex, type FieldStep } from './fields.js';

const index = createFieldIndex(ocsfCatalog(), [
  'envelope.organization_id',
  'envelope.integration_id',
  'envelope.stream',
  'envelope.valid',
]);

/** `a.b[*].c` / `a[0]` / `a["x.y"]` as steps (enough for these tests). */
function steps(path: string): FieldStep[] {
  const out: FieldStep[] = [];
  for (const m of path.matchAll(/\["([^"]*)"\]|\[(\*|\d+)\]|([^.[\]]+)/g)) {
    if (m[1] !== undefined) out.push({ t: 'key', k: m[1] });
    else if (m[2] !== undefined) out.push({ t: m[2] === '*' ? 'all' : 'idx' });
    else out.push({ t: 'key', k: m[3]! });
  }
  return out;
}
const check = (path: string) => index.check(steps(path));

describe('OCSF field index', () => {
  it('knows the attributes of every supported class, nested objects and arrays included', () => {
    for (const path of [
      'class_uid',
      'activity_id',
      'actor.user.name',
      'src_endpoint.ip',
      'observables[*].value',
      'observables[0].type_id',
      'metadata.product.vendor_name',
      'process.parent_process.parent_process.file.name', // recursive objects
      'query.hostname', // dns_activity only
      'http_request.url.hostname', // http_activity only
      'finding_info.title', // detection_finding only
      'api.operation', // api_activity only
    ]) {
      expect(check(path), path).toBeUndefined();
    }
  });

  it('knows the attributes of the profiles the classes support', () => {
    for (const path of [
      'cloud.provider',
      'time_dt',
      'device.hostname',
      'osint[*].value',
      'process.container.name',
      'risk_score',
    ])
      expect(check(path), path).toBeUndefined();
  });

  it('allows anything below a free-form attribute (unmapped, xattributes, json data)', () => {
    for (const path of [
      'unmapped',
      'unmapped.anything.deep[*].x',
      'unmapped["x.y"]',
      'file.xattributes.whatever',
      'enrichments[*].data.ip.country',
      'metadata.extensions',
    ]) {
      expect(check(path), path).toBeUndefined();
    }
  });

  it('refuses a path no class has, naming the closest known field', () => {
    expect(check('clas_uid')).toMatchObject({ at: 0, closest: 'class_uid' });
    expect(check('clas_uid')!.message).toMatch(
      /no supported OCSF class has 'clas_uid'.*closest known field: 'class_uid'/,
    );
    expect(check('actor.usr.name')).toMatchObject({ at: 1, closest: 'actor.user.name' });
    expect(check('actor.usr.name')!.message).toContain("'actor' has no field 'usr'");
    expect(check('observables[*].valeu')).toMatchObject({ closest: 'observables[*].value' });
  });

  it('refuses a field below a scalar value', () => {
    const found = check('class_uid.name');
    expect(found).toMatchObject({ at: 1, closest: 'class_uid' });
    expect(found!.message).toMatch(/'class_uid' is a value \(integer_t\) with no field 'name'/);
  });

  it('offers the extra top-level paths (envelope fields) when they are closer', () => {
    expect(check('envelop.stream')).toMatchObject({ closest: 'envelope.stream' });
  });
});

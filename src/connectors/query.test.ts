// Live-query translation (docs/live-queries.md): per vendor, what a query pushes down with the
// built-in mapping, what stays local, how values are escaped, and OR/NOT handling.
import { describe, expect, it } from 'vitest';
import { liveQueryCapability } from '../modules/providers/service.js';
import { parseQueryText } from '../pipeline/conditions/text.js';
import { builtinMapping } from '../pipeline/normalize/builtin/index.js';
import { awsCloudtrailConnector } from './aws_cloudtrail/index.js';
import { crowdstrikeFalconConnector } from './crowdstrike_falcon/index.js';
import { githubConnector } from './github/index.js';
import { googleWorkspaceConnector } from './google_workspace/index.js';
import { microsoftGraphConnector } from './microsoft_graph/index.js';
import { oktaConnector } from './okta/index.js';
import { necessary, pushdownFields, type RenderedFilter } from './query.js';
import type { Connector } from './sdk.js';

function translate(connector: Connector, stream: string, query: string, doc?: Record<string, unknown>): RenderedFilter {
  const spec = connector.query!;
  const document = doc ?? (builtinMapping(connector.platform, stream)!.document as unknown as Record<string, unknown>);
  const fields = pushdownFields(spec.streams[stream]!, document, spec.absent);
  return spec.render(stream, necessary(parseQueryText(query).condition, fields, spec.or));
}

describe('live queries: okta filter', () => {
  const okta = (q: string) => translate(oktaConnector, 'system_log', q);

  it('pushes eq, startswith and contains on plain copies, joined by and', () => {
    expect(
      okta(
        'metadata.event_code = "user.session.start" and actor.user.name startswith "adm" and message contains "sign"',
      ).params,
    ).toEqual({
      filter: 'eventType eq "user.session.start" and actor.alternateId sw "adm" and displayMessage co "sign"',
    });
  });

  it('escapes quotes and backslashes in string literals', () => {
    expect(okta("actor.user.name = 'a\"b\\\\c'").params.filter).toBe('actor.alternateId eq "a\\"b\\\\c"');
  });

  it('pushes an OR whose branches are all filterable; an in list becomes an OR', () => {
    expect(okta('metadata.event_code in ("a.b", "c.d")').params.filter).toBe(
      'eventType eq "a.b" or eventType eq "c.d"',
    );
    expect(
      okta('actor.user.name = "x" and (metadata.event_code = "a" or metadata.event_code startswith "b")').params.filter,
    ).toBe('actor.alternateId eq "x" and (eventType eq "a" or eventType sw "b")');
  });

  it('keeps local an OR with an unfilterable branch, NOT, lookups, casts and non-text values', () => {
    expect(okta('metadata.event_code = "a" or severity_id = 4').text).toBeNull();
    expect(okta('not metadata.event_code = "a"').text).toBeNull();
    expect(okta('metadata.event_code != "a"').text).toBeNull();
    // status_id is a lookup of outcome.result; email_addr a cast of actor.alternateId.
    expect(okta('status_id = 2').text).toBeNull();
    expect(okta('actor.user.email_addr = "a@b.c"').text).toBeNull();
    expect(okta('actor.user.name = 5').text).toBeNull();
    // The part of an AND Okta can filter is still pushed.
    expect(okta('status_id = 2 and metadata.event_code = "a"').params.filter).toBe('eventType eq "a"');
  });

  it('pushes nothing through a mapping that parses at the top level, from a parsed field, or fills the field twice', () => {
    const doc = builtinMapping('okta', 'system_log')!.document as unknown as Record<string, unknown>;
    expect(
      translate(oktaConnector, 'system_log', 'metadata.event_code = "a"', { ...doc, parse: [{ parser: 'json' }] }).text,
    ).toBeNull();
    // Parse steps writing `into` a path leave the vendor's own fields pushable, not theirs.
    const into = { ...doc, parse: [{ parser: 'kv', from: 'displayMessage', into: 'eventType' }] };
    expect(translate(oktaConnector, 'system_log', 'metadata.event_code = "a"', into).text).toBeNull();
    expect(
      translate(oktaConnector, 'system_log', 'metadata.event_code = "a"', {
        ...doc,
        parse: [{ parser: 'kv', from: 'displayMessage', into: 'weir_parsed' }],
      }).text,
    ).toBe('eventType eq "a"');
    const twice = {
      ...doc,
      defaults: [...(doc.defaults as unknown[]), { target: 'metadata.event_code', from: 'legacyEventType' }],
    };
    expect(translate(oktaConnector, 'system_log', 'metadata.event_code = "a"', twice).text).toBeNull();
  });
});

describe('live queries: Graph $filter', () => {
  it('eq and startswith with OData quoting; contains stays local', () => {
    const r = translate(
      microsoftGraphConnector,
      'signins',
      'actor.app_name = "O\'Brien Portal" and src_endpoint.location.city startswith "Red" and user.full_name contains "x"',
    );
    expect(r.params).toEqual({ $filter: "appDisplayName eq 'O''Brien Portal' and startswith(location/city, 'Red')" });
    expect(translate(microsoftGraphConnector, 'signins', 'actor.app_name contains "Office"').text).toBeNull();
  });

  it('reads of the Azure Monitor form (properties.*) do not stop a push-down; a fallback the API carries does', () => {
    // actor.app_name: ["properties.appDisplayName", "appDisplayName"]: the API never sends `properties`.
    expect(translate(microsoftGraphConnector, 'signins', 'actor.app_name = "Azure Portal"').text).toBe(
      "appDisplayName eq 'Azure Portal'",
    );
    // user.name falls back to servicePrincipalName (a service principal's sign-in): userPrincipalName alone is not necessary.
    expect(translate(microsoftGraphConnector, 'signins', 'user.name = "ana@example.com"').text).toBeNull();
  });

  it('nested properties use "/" and ORs are parenthesized', () => {
    expect(
      translate(microsoftGraphConnector, 'directory_audits', 'actor.user.name in ("a@x.io", "b@x.io")').params.$filter,
    ).toBe("(initiatedBy/user/userPrincipalName eq 'a@x.io' or initiatedBy/user/userPrincipalName eq 'b@x.io')");
  });
});

describe('live queries: CloudTrail LookupAttributes', () => {
  const ct = (q: string) => translate(awsCloudtrailConnector, 'cloudtrail', q);

  it('sends one attribute, the most selective of the ANDed ones', () => {
    expect(ct('metadata.event_code = "ConsoleLogin" and api.service.name = "signin.amazonaws.com"').params).toEqual({
      LookupAttributes: JSON.stringify([{ AttributeKey: 'EventName', AttributeValue: 'ConsoleLogin' }]),
    });
    expect(ct('api.service.name = "iam.amazonaws.com" and metadata.uid = "e-1"').text).toBe('EventId=e-1');
  });

  it('keeps ORs, prefixes and the user name local', () => {
    expect(ct('metadata.event_code = "A" or metadata.event_code = "B"').text).toBeNull();
    expect(ct('metadata.event_code startswith "Get"').text).toBeNull();
    expect(ct('actor.user.name = "alice"').text).toBeNull();
  });
});

describe('live queries: GitHub phrase', () => {
  const gh = (q: string) => translate(githubConnector, 'audit_log', q);

  it('action: and actor: qualifiers, one value each', () => {
    expect(gh('metadata.event_code = "repo.create" and actor.user.name = "octocat"').params).toEqual({
      phrase: 'action:repo.create actor:octocat',
    });
  });

  it('a value the phrase cannot carry bare, an OR or a prefix stays local', () => {
    expect(gh('actor.user.name = "a b"').text).toBeNull();
    expect(gh('actor.user.name = "x:y"').text).toBeNull();
    expect(gh('metadata.event_code = "a" or metadata.event_code = "b"').text).toBeNull();
    expect(gh('metadata.event_code startswith "repo."').text).toBeNull();
  });
});

describe('live queries: CrowdStrike FQL', () => {
  it("field:'value' joined by + and , with escapes", () => {
    const r = translate(
      crowdstrikeFalconConnector,
      'alerts',
      'device.name = "host-1" and (finding_info.analytic.name = "A" or finding_info.analytic.name = "B\'s \\\\x")',
    );
    expect(r.params).toEqual({ filter: "device.hostname:'host-1'+(name:'A',name:'B\\'s \\\\x')" });
  });

  it('keeps NOT and operators FQL would read differently local', () => {
    expect(translate(crowdstrikeFalconConnector, 'alerts', 'not device.name = "h"').text).toBeNull();
    expect(translate(crowdstrikeFalconConnector, 'alerts', 'device.name contains "h"').text).toBeNull();
  });
});

describe('live queries: Google Reports', () => {
  it('userKey, eventName and filters from the plain copies', () => {
    const r = translate(
      googleWorkspaceConnector,
      'login',
      'actor.user.name = "ana@example.com" and metadata.event_code = "login_failure" and status_detail = "login_failure_invalid_password"',
    );
    expect(r.params).toEqual({
      userKey: 'ana@example.com',
      eventName: 'login_failure',
      filters: 'login_failure_type==login_failure_invalid_password',
    });
  });

  it('has no OR; a filters value with a comma stays local', () => {
    expect(
      translate(googleWorkspaceConnector, 'login', 'metadata.event_code = "a" or metadata.event_code = "b"').text,
    ).toBeNull();
    expect(translate(googleWorkspaceConnector, 'login', 'status_detail = "a,b"').text).toBeNull();
  });
});

describe('live queries: one source of truth with query-capabilities', () => {
  it('lists exactly the fields the translation pushes down with the built-in mapping', () => {
    for (const c of [
      oktaConnector,
      microsoftGraphConnector,
      awsCloudtrailConnector,
      githubConnector,
      crowdstrikeFalconConnector,
      googleWorkspaceConnector,
    ]) {
      for (const s of c.streams) {
        const cap = liveQueryCapability(c, s.name);
        const pushed = pushdownFields(
          c.query!.streams[s.name] ?? [],
          builtinMapping(c.platform, s.name)!.document as unknown as Record<string, unknown>,
          c.query!.absent,
        );
        expect(cap.supported).toBe(true);
        expect(cap.fields.map((f) => f.field).sort()).toEqual([...pushed.keys()].sort());
      }
    }
    expect(liveQueryCapability(oktaConnector, 'system_log').fields).toEqual(
      expect.arrayContaining([
        { field: 'metadata.event_code', vendor_field: 'eventType', ops: ['eq', 'prefix', 'contains'] },
      ]),
    );
    expect(liveQueryCapability(awsCloudtrailConnector, 'cloudtrail').fields).toEqual(
      expect.arrayContaining([{ field: 'metadata.event_code', vendor_field: 'EventName', ops: ['eq'] }]),
    );
  });
});

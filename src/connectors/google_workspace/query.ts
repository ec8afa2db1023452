// Google Workspace live queries: the Reports API's activities.list parameters
// (developers.google.com, Admin SDK Reports API, activities.list): userKey (the actor's
// e-mail instead of "all"), eventName (one event name) and filters (event parameters,
// `name==value` joined by commas: AND), beside startTime and endTime. No OR. A value holding a
// comma cannot be told apart in `filters` and stays local.
import { conjuncts, isLeaf, nameOf, type LiveQuerySpec, type VendorField } from '../query.js';

const param = (name: string): VendorField => ({
  path: `events[0].parameters[?name=${name}].value`,
  name: `filters:${name}`,
  ops: ['eq'],
});
const common: VendorField[] = [
  { path: 'actor.email', name: 'userKey', ops: ['eq'] },
  { path: 'events[0].name', name: 'eventName', ops: ['eq'] },
];

export const googleQuery: LiveQuerySpec = {
  or: false,
  parameter: 'userKey, eventName and filters (name==value) beside startTime and endTime',
  streams: {
    login: [...common, param('login_type'), param('login_failure_type')],
    admin: [...common, param('USER_EMAIL'), param('GROUP_EMAIL')],
  },
  render(_stream, filter) {
    const params: Record<string, string> = {};
    const filters: string[] = [];
    for (const f of conjuncts(filter).filter(isLeaf)) {
      const name = nameOf(f.field);
      if (f.op !== 'eq') continue;
      if (name.startsWith('filters:')) {
        if (!/[,=]/.test(f.value) && !filters.some((x) => x.startsWith(`${name.slice(8)}==`)))
          filters.push(`${name.slice(8)}==${f.value}`);
      } else if (params[name] === undefined) {
        params[name] = f.value;
      }
    }
    if (filters.length > 0) params.filters = filters.join(',');
    const text = Object.entries(params)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    return { params, text: text === '' ? null : text };
  },
};

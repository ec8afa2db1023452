// What each place of an event is, for masking (pipeline/mask.ts):
//
// - personal: a value that identifies or describes a person or a host (user names, e-mail and
//   IP addresses, host names, locations, credentials). Masked to its shape, and wherever else
//   the event copies it.
// - text: the vendor's free-text message, which may name people anywhere in it: masked whole
//   (it is not an identity to hunt elsewhere).
// - label: what the event is rather than whom it is about: OCSF enum ids and their captions
//   (class_name, activity_name, type_name, severity, status...), codes and ids (`*_uid`,
//   `*_code`, status_detail), timestamps, metadata (product, version, event uid). Never masked.
// - free: any other text (titles, URLs, command lines). Kept, with the copies of masked values,
//   e-mail and IP addresses and long digit runs inside it masked.
// - raw: `raw_data`, the vendor's event as text: masked as a raw event when it is JSON, else
//   whole.
//
// A normalized OCSF event (a known `class_uid`) is read with its class's schema, in the
// schema's own terms: an attribute with an `enum`, or the `sibling` caption of one, is a
// label; one of a type whose observable is a host name, IP, MAC, user name or e-mail address
// is personal; so is everything in an object whose observable is a User, an Email or a Geo
// Location (an enum or caption there stays a label: `user.type` is "User", not a person), and
// the name of an Endpoint (device, network endpoint, proxy). Raw vendor events, `unmapped`
// and attributes the schema does not know are read by their key names (isPersonalKey).
import { FREE_OBJECT, ocsfCatalog } from '../ocsf/catalog.js';
import { observableTypes } from '../ocsf/observables.js';
import type { OcsfAttribute } from '../ocsf/types.js';

export type Kind = 'personal' | 'text' | 'label' | 'free' | 'raw';

export interface Place {
  readonly kind: Kind;
  /** The place of the value under `key` of an object here (array items share their array's place). */
  child(key: string): Place;
  /** The place of one object here when its own content decides (an observable's value). */
  refine?(value: Record<string, unknown>): Place;
}

// ---- Key names (raw events, unmapped, attributes unknown to the schema) ----

// Compared against the key lowercased with every non-alphanumeric character removed.
const PERSONAL_SUBSTRINGS = [
  'mail', // email, e_mail, mailbox, emailAddress
  'username',
  'userprincipal',
  'principalname',
  'alternateid',
  'login',
  'displayname',
  'fullname',
  'firstname',
  'lastname',
  'givenname',
  'surname',
  'familyname',
  'nickname',
  'actorname',
  'hostname',
  'phone',
  'mobile',
  'msisdn',
  'address', // ipAddress, sourceIPAddress, macAddress, street address
  'ipaddr',
  'ipv4',
  'ipv6',
  'remoteaddr',
  'forwardedfor',
  'password',
  'passwd',
  'secret',
  'apikey',
  'accesskey',
  'authorization',
  'cookie',
  'birth',
  'creditcard',
  'cardnumber',
];
// Run-together spellings that end in "ip" ("zip", "ship" must not match).
const IP_SUFFIXES = [
  'clientip',
  'remoteip',
  'sourceip',
  'srcip',
  'dstip',
  'destip',
  'destinationip',
  'hostip',
  'publicip',
  'privateip',
  'localip',
  'callerip',
  'userip',
  'realip',
  'peerip',
];
// Whole words (from snake, kebab and camel case) that name personal data on their own. "ssn"
// is a word, not a substring: as a substring it is in "classname".
const PERSONAL_WORDS = new Set(['ip', 'ipv4', 'ipv6', 'ips', 'user', 'users', 'upn', 'email', 'phone', 'addr', 'ssn']);
// Not personal although they contain a personal word.
const NOT_PERSONAL = new Set(['useragent', 'usertype', 'usercount', 'mailer']);

const keyCache = new Map<string, boolean>();
const KEY_CACHE_MAX = 10_000;

/** True when a key (one segment, any case and separator style) names personal data. */
export function isPersonalKey(key: string): boolean {
  const cached = keyCache.get(key);
  if (cached !== undefined) return cached;
  const result = classify(key);
  if (keyCache.size >= KEY_CACHE_MAX) keyCache.clear();
  keyCache.set(key, result);
  return result;
}

function classify(key: string): boolean {
  const flat = key.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (flat === '' || NOT_PERSONAL.has(flat)) return false;
  if (PERSONAL_WORDS.has(flat)) return true;
  if (PERSONAL_SUBSTRINGS.some((s) => flat.includes(s))) return true;
  if (IP_SUFFIXES.some((s) => flat.endsWith(s))) return true;
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  return words.some((w) => PERSONAL_WORDS.has(w));
}

/** True when any segment of a dotted path (`user.name`, `a.list[].ip`) names personal data. */
export function isPersonalPath(path: string): boolean {
  for (const segment of path.split('.')) {
    if (isPersonalKey(segment.replace(/\[\d*\]/g, ''))) return true;
  }
  return false;
}

/** Everything below is personal. */
export const PERSONAL: Place = { kind: 'personal', child: () => PERSONAL };
/** Read by key names: a string is free text unless its key (or one above it) names personal data. */
export const BY_KEY: Place = { kind: 'free', child: (key) => (isPersonalKey(key) ? PERSONAL : BY_KEY) };
const LABEL: Place = { kind: 'label', child: (key) => BY_KEY.child(key) };
const RAW: Place = { kind: 'raw', child: (key) => BY_KEY.child(key) };
const TEXT: Place = { kind: 'text', child: () => PERSONAL };

// ---- The OCSF schema ----

/** Observable captions (of types and objects) that say a value is about a person or a host. */
const PERSONAL_TYPE_OBSERVABLES = new Set(['Hostname', 'IP Address', 'MAC Address', 'User Name', 'Email Address']);
const PERSONAL_OBJECT_OBSERVABLES = new Set(['User', 'Email', 'Geo Location']);
const ENDPOINT_OBSERVABLE = 'Endpoint';
/** Objects with no observable of their own that hold a person's data or a credential. */
const PERSONAL_OBJECTS = new Set(['ldap_person', 'programmatic_credential', 'http_cookie']);
/** Attributes of a personal object that stay readable: a country or a continent does not single anyone out. */
const COARSE: Readonly<Record<string, readonly string[]>> = { location: ['country', 'continent'] };
/** Counts and scores in a personal object (user.risk_score, email.size) say nothing of whom it is about. */
const NUMBER_TYPES = new Set(['integer_t', 'long_t']);
/** An HTTP header whose value is personal: credentials, cookies, sessions, forwarded addresses. */
const isPersonalHeader = (name: string) => isPersonalKey(name) || /token|session|auth/i.test(name);
/** Objects whose plain strings describe the event, not a person: metadata, the product, an observable's path. */
const LABEL_OBJECTS = new Set(['metadata', 'product', 'observable']);
/** Top-level attributes of every class: the vendor's message is free text about people; raw_data is the raw event. */
const CLASS_TEXT = new Set(['message']);
const CLASS_RAW = new Set(['raw_data']);
const LABEL_TYPES = new Set(['timestamp_t', 'datetime_t', 'boolean_t', 'uuid_t']);

const catalog = () => ocsfCatalog();
const memo = new Map<string, boolean>();
function remembered(key: string, compute: () => boolean): boolean {
  let v = memo.get(key);
  if (v === undefined) memo.set(key, (v = compute()));
  return v;
}

const observableCaption = (id: number | undefined) => (id === undefined ? undefined : observableTypes().get(id));

function personalType(type: string): boolean {
  return remembered(`t:${type}`, () => {
    const caption = observableCaption(catalog().type(type)?.observable);
    return caption !== undefined && PERSONAL_TYPE_OBSERVABLES.has(caption);
  });
}

function personalObject(name: string): boolean {
  return remembered(`o:${name}`, () => {
    if (PERSONAL_OBJECTS.has(name)) return true;
    const caption = observableCaption(catalog().object(name)?.observable);
    return caption !== undefined && PERSONAL_OBJECT_OBSERVABLES.has(caption);
  });
}

function personalAttribute(object: string, name: string): boolean {
  return (
    name === 'name' &&
    remembered(`e:${object}`, () => observableCaption(catalog().object(object)?.observable) === ENDPOINT_OBSERVABLE)
  );
}

/** Codes and ids name a thing, not a person (a person's own ids are personal through their object). */
const isCodeName = (name: string) =>
  name === 'uid' || name.endsWith('_uid') || name === 'code' || name.endsWith('_code') || name === 'status_detail';

type Mode = 'plain' | 'personal' | 'label';

/** The captions of an attribute set: the `sibling` of each enum attribute. */
function captionsOf(attrs: Readonly<Record<string, OcsfAttribute>>): Set<string> {
  const out = new Set<string>();
  for (const a of Object.values(attrs)) if (a.enum && a.sibling) out.add(a.sibling);
  return out;
}

/** The place of the values of a set of attributes (a class's or an object's). */
function attributesPlace(
  owner: string,
  attrs: Readonly<Record<string, OcsfAttribute>>,
  mode: Mode,
  top: boolean,
  root: Place | null,
): Place {
  const captions = captionsOf(attrs);
  const children = new Map<string, Place>();
  const self: Place = {
    kind: mode === 'personal' ? 'personal' : mode === 'label' ? 'label' : 'free',
    child(key) {
      if (!Object.hasOwn(attrs, key)) return mode === 'personal' ? PERSONAL : BY_KEY.child(key);
      let place = children.get(key);
      if (!place) children.set(key, (place = attributePlace(attrs[key]!)));
      return place;
    },
  };

  function attributePlace(a: OcsfAttribute): Place {
    if (a.enum || captions.has(a.name) || LABEL_TYPES.has(a.type)) return LABEL;
    if (top && CLASS_TEXT.has(a.name)) return TEXT;
    if (top && CLASS_RAW.has(a.name)) return RAW;
    const object = a.objectType;
    if (object !== undefined) {
      if (object === FREE_OBJECT) return mode === 'personal' ? PERSONAL : BY_KEY;
      const next: Mode =
        mode === 'personal' || personalObject(object)
          ? 'personal'
          : mode === 'label' || LABEL_OBJECTS.has(object)
            ? 'label'
            : 'plain';
      return objectPlace(object, next, top ? self : root);
    }
    if (personalType(a.type) || personalAttribute(owner, a.name)) return PERSONAL;
    if (mode === 'personal') return NUMBER_TYPES.has(a.type) || COARSE[owner]?.includes(a.name) ? LABEL : PERSONAL;
    if (mode === 'label' || isCodeName(a.name)) return LABEL;
    return BY_KEY;
  }

  return self;
}

const objectPlaces = new Map<string, Place>();
const OBSERVABLE = 'observable';

function objectPlace(name: string, mode: Mode, root: Place | null): Place {
  // Observables resolve their `name` against the event's class: one place per class for them.
  if (name === OBSERVABLE && root) return observablePlace(root, mode);
  const key = `${name}|${mode}`;
  let place = objectPlaces.get(key);
  if (!place) {
    const attrs = catalog().object(name)?.attributes ?? {};
    place = attributesPlace(name, attrs, mode, false, null);
    if (name === HTTP_HEADER) place = headerPlace(place);
    objectPlaces.set(key, place);
  }
  return place;
}

const HTTP_HEADER = 'http_header';

/** A header's value is personal when its name says it carries a credential or an address. */
function headerPlace(base: Place): Place {
  const personal: Place = { kind: base.kind, child: (key) => (key === 'value' ? PERSONAL : base.child(key)) };
  return {
    kind: base.kind,
    child: base.child,
    refine: (value) => (typeof value.name === 'string' && isPersonalHeader(value.name) ? personal : base),
  };
}

const personalObservableIds = (): ReadonlySet<number> => {
  const out = new Set<number>();
  for (const [id, caption] of observableTypes()) {
    if (PERSONAL_TYPE_OBSERVABLES.has(caption) || PERSONAL_OBJECT_OBSERVABLES.has(caption)) out.add(id);
    // "User Object: uid", "Email Object: subject": an attribute of a personal object.
    else if ([...PERSONAL_OBJECT_OBSERVABLES].some((o) => caption.startsWith(`${o} Object:`))) out.add(id);
  }
  return out;
};
let personalIds: ReadonlySet<number> | undefined;

/** The kind of the attribute at a dotted path (`actor.user.name`, `resources[].uid`) below a place. */
export function kindAt(place: Place, path: string): Kind {
  let at = place;
  for (const segment of path.split('.')) at = at.child(segment.replace(/\[\d*\]/g, ''));
  return at.kind;
}

const observablesByRoot = new WeakMap<Place, Map<Mode, Place>>();

function observablePlace(root: Place, mode: Mode): Place {
  let byMode = observablesByRoot.get(root);
  if (!byMode) observablesByRoot.set(root, (byMode = new Map()));
  let place = byMode.get(mode);
  if (place) return place;
  const attrs = catalog().object(OBSERVABLE)?.attributes ?? {};
  const base = attributesPlace(OBSERVABLE, attrs, mode, false, null);
  // The value is free text (its copies of masked values masked) unless refine finds it personal.
  const plain: Place = { kind: base.kind, child: (key) => (key === 'value' ? BY_KEY : base.child(key)) };
  const personal: Place = { kind: base.kind, child: (key) => (key === 'value' ? PERSONAL : base.child(key)) };
  place = {
    kind: base.kind,
    child: plain.child,
    // An observable's value is personal when its type is, or when the attribute it names is.
    refine(value) {
      personalIds ??= personalObservableIds();
      if (typeof value.type_id === 'number' && personalIds.has(value.type_id)) return personal;
      if (typeof value.name === 'string' && value.name.length <= 256 && kindAt(root, value.name) === 'personal')
        return personal;
      return plain;
    },
  };
  byMode.set(mode, place);
  return place;
}

const classPlaces = new Map<number, Place>();

/** Where masking starts in an event: its OCSF class's schema when it names a known class, else key names. */
export function eventPlace(event: Record<string, unknown>): Place {
  const uid = event.class_uid;
  if (typeof uid !== 'number') return BY_KEY;
  let place = classPlaces.get(uid);
  if (place) return place;
  const def = catalog().classByUid(uid);
  if (!def) return BY_KEY;
  place = attributesPlace(def.name, def.attributes, 'plain', true, null);
  classPlaces.set(uid, place);
  return place;
}

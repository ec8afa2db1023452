// The JSON shape of OCSF definitions: the official compiled schema (format compact-1, see
// third_party/ocsf-schema/README.md) and the project's own extract of it (definitions.json) share it,
// so one createCatalog() reads both. Keys the project does not use are simply ignored.

export interface RawAttribute {
  caption: string;
  type: string;
  object_type?: string;
  is_array?: boolean;
  requirement: 'required' | 'recommended' | 'optional';
  sibling?: string;
  profiles?: string[];
  observable?: number;
  enum?: Record<string, string>;
}

export interface RawConstraints {
  at_least_one?: string[];
  just_one?: string[];
}

export interface RawClass {
  name: string;
  caption: string;
  uid: number;
  category: string;
  category_uid: number;
  category_name: string;
  profiles: string[];
  constraints?: RawConstraints;
  attributes: Record<string, RawAttribute>;
}

export interface RawObject {
  name: string;
  caption: string;
  profiles?: string[];
  observable?: number;
  constraints?: RawConstraints;
  attributes: Record<string, RawAttribute>;
}

export interface RawType {
  caption: string;
  /** The base type; absent for the base types themselves (string_t, integer_t, ...). */
  type?: string;
  max_len?: number;
  range?: [number, number];
  regex?: string;
  values?: unknown[];
  observable?: number;
}

export interface OcsfDefinitions {
  ocsf_version: string;
  source?: { repo: string; ref: string; commit: string; license: string };
  types: Record<string, RawType>;
  classes: Record<string, RawClass>;
  objects: Record<string, RawObject>;
}

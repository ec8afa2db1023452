// The OCSF module's public entry: the catalog of supported classes and the validator.
export { createCatalog, ocsfCatalog, OCSF_VERSION, FREE_OBJECT, OcsfDefinitionError } from './catalog.js';
export { compileValidator, createValidator, MAX_ISSUES, type EventValidator, type OcsfValidator } from './validator.js';
export { SUPPORTED_CLASSES, SUPPORTED_CLASS_UIDS } from './supported.js';
export { observableTypes } from './observables.js';
export type { OcsfDefinitions } from './format.js';
export type * from './types.js';
export { createFieldIndex, type FieldStep, type OcsfFieldIndex, type UnknownField } from './fields.js';

// The mapping language and the OCSF validator behind the MappingEngine the tools use. The
// catalog and validator are built on first use (a process that never serves a mapping
// tool never loads them), then shared for the life of the process.
import { createValidator, ocsfCatalog, type OcsfValidator } from '../../ocsf/index.js';
import { runCases } from '../../pipeline/normalize/cases.js';
import { compileMapping, TYPE_CASTS, validateMappingDocument } from '../../pipeline/normalize/compile.js';
import type { MappingDocument } from '../../pipeline/normalize/types.js';
import type { MappingEngine } from './tools.js';

export function createMappingEngine(): MappingEngine {
  let validator: OcsfValidator | undefined;
  return {
    checkDocument: (doc) => validateMappingDocument(doc, ocsfCatalog()),
    compile: (doc) => compileMapping(doc as unknown as MappingDocument, ocsfCatalog()),
    validate: (event) => (validator ??= createValidator(ocsfCatalog())).validate(event),
    typeCasts: () => TYPE_CASTS,
    runTests(doc) {
      const d = doc as unknown as MappingDocument;
      if (!d.tests || d.tests.length === 0) return [];
      validator ??= createValidator(ocsfCatalog());
      const v = validator;
      return runCases(d, compileMapping(d, ocsfCatalog()), (e) => v.validate(e));
    },
  };
}

// A Sigma rule that cannot be compiled faithfully: where (a YAML position, a detection key,
// the condition's column) and why, in words a rule author can act on.
export interface SigmaProblem {
  location: string;
  message: string;
}

export class SigmaError extends Error {
  constructor(
    readonly location: string,
    readonly reason: string,
  ) {
    super(`${location}: ${reason}`);
    this.name = 'SigmaError';
  }
}

// The domain error: thrown below the HTTP layer (services, repositories), mapped to a status in one
// place (api/error.middleware.ts), to an isError tool result by MCP and to a message by the dashboard.

/** A field-level validation message, as rendered in `errors[]` of a 422 body. */
export interface FieldError {
  field: string;
  message: string;
}

export type ErrorKind =
  | 'bad_request'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'unauthenticated'
  | 'insufficient_credits'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'gone'
  | 'range_not_satisfiable'
  | 'invalid'
  | 'rate_limited'
  | 'unavailable'
  | 'timeout'
  | 'upstream';

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    /** A sentence a person can act on. */
    readonly detail: string,
    readonly extra: { errors?: FieldError[]; retryAfterSeconds?: number; allow?: string[]; contentRange?: string } = {},
  ) {
    super(detail);
    this.name = 'DomainError';
  }

  static invalid(detail: string, errors?: FieldError[]): DomainError {
    return new DomainError('invalid', detail, errors ? { errors } : {});
  }
  /** 422 for one field: `{field} {problem}` as the detail. */
  static invalidField(field: string, problem: string): DomainError {
    return new DomainError('invalid', `${field} ${problem}`, { errors: [{ field, message: problem }] });
  }
  static notFound(detail: string): DomainError {
    return new DomainError('not_found', detail);
  }
  static conflict(detail: string): DomainError {
    return new DomainError('conflict', detail);
  }
}

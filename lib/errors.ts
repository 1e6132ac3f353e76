/** A field-level validation message, as rendered in `errors[]` of a 422 body. */
export interface FieldError {
  field: string;
  message: string;
}

/** The one error type that carries an HTTP status; the error middleware renders it as `{detail}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly extra: { errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    this.name = 'ApiError';
  }

  static badRequest(detail: string): ApiError {
    return new ApiError(400, detail);
  }
  static unauthorized(detail: string): ApiError {
    return new ApiError(401, detail, { headers: { 'WWW-Authenticate': 'Bearer' } });
  }
  static paymentRequired(detail: string): ApiError {
    return new ApiError(402, detail);
  }
  static forbidden(detail: string): ApiError {
    return new ApiError(403, detail);
  }
  static notFound(detail: string): ApiError {
    return new ApiError(404, detail);
  }
  static gone(detail: string): ApiError {
    return new ApiError(410, detail);
  }
  static unprocessable(detail: string, errors?: FieldError[]): ApiError {
    return new ApiError(422, detail, errors ? { errors } : {});
  }
  static tooManyRequests(detail: string, retryAfterSeconds: number): ApiError {
    return new ApiError(429, detail, { headers: { 'Retry-After': String(retryAfterSeconds) } });
  }
}

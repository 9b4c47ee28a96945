// One error vocabulary for both API surfaces: REST maps `status`, GraphQL exposes `code`, `message`, `details`.

export interface ErrorDetail {
  /** Dotted path of the offending input field, e.g. `items.2.price`; empty for the whole request. */
  path: string;
  message: string;
}

export const ERROR_STATUS = {
  MALFORMED_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  INVOICE_NOT_PROCEEDABLE: 409,
  IDEMPOTENCY_KEY_IN_USE: 409,
  ORDER_ID_IN_USE: 409,
  LENGTH_REQUIRED: 411,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  VALIDATION_FAILED: 422,
  IDEMPOTENCY_KEY_REUSED: 409,
  RATE_LIMITED: 429,
  SERVICE_UNAVAILABLE: 503,
  RATE_UNAVAILABLE: 503,
  INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[];
  constructor(code: ErrorCode, message: string, details: ErrorDetail[] = []) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }
  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export class ValidationError extends AppError {
  constructor(details: ErrorDetail[], message = 'The request is invalid') {
    super('VALIDATION_FAILED', message, details);
    this.name = 'ValidationError';
  }
}

/** An amount that would take a balance or an invoice's paid total past the service's limit (docs/money.md, "Limits"). */
export class LimitExceededError extends ValidationError {
  constructor(message: string, path = 'amount') {
    super([{ path, message }], message);
    this.name = 'LimitExceededError';
  }
}

export class NotFoundError extends AppError {
  constructor(message: string) {
    super('NOT_FOUND', message);
    this.name = 'NotFoundError';
  }
}

export class ConflictError extends AppError {
  constructor(code: 'CONFLICT' | 'INVOICE_NOT_PROCEEDABLE' | 'IDEMPOTENCY_KEY_IN_USE' | 'IDEMPOTENCY_KEY_REUSED' | 'ORDER_ID_IN_USE', message: string, details: ErrorDetail[] = []) {
    super(code, message, details);
    this.name = 'ConflictError';
  }
}

/** No good exchange rate of a currency now (docs/rates.md): no fresh source, too few agreeing, or none configured. */
export class RateUnavailableError extends AppError {
  constructor(currency: string, reason: string) {
    super('RATE_UNAVAILABLE', `No exchange rate for ${currency} now: ${reason}`, [{ path: 'paymentCurrency', message: reason }]);
    this.name = 'RateUnavailableError';
  }
}

/** Too many of something from one caller: wait `retryAfterSeconds` (the Retry-After header). */
export class RateLimitedError extends AppError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super('RATE_LIMITED', message);
    this.name = 'RateLimitedError';
  }
}

/** The caller is known but may not do this (a live-mode token on a test-mode-only operation, ...). */
export class ForbiddenError extends AppError {
  constructor(message: string) {
    super('FORBIDDEN', message);
    this.name = 'ForbiddenError';
  }
}

export class UnauthenticatedError extends AppError {
  constructor(message = 'A valid `Authorization: Bearer <public token>` header is required') {
    super('UNAUTHENTICATED', message);
    this.name = 'UnauthenticatedError';
  }
}

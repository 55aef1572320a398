/** An RFC 9457 problem returned by the API, thrown by every operation so screens can show `detail` and field errors. */
export interface Problem {
  type?: string;
  title: string;
  status: number;
  detail?: string;
  errors?: Record<string, unknown>;
}

export class ApiError extends Error {
  readonly status: number;
  readonly problem: Problem;

  constructor(problem: Problem) {
    super(problem.detail ?? problem.title);
    this.name = 'ApiError';
    this.status = problem.status;
    this.problem = problem;
  }

  /** Field errors flattened to one message per field (marshmallow gives lists, nested objects for nested fields). */
  get fieldErrors(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [field, value] of Object.entries(this.problem.errors ?? {})) {
      out[field] = flattenMessage(value);
    }
    return out;
  }
}

function flattenMessage(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(flattenMessage).join(' ');
  if (value && typeof value === 'object') {
    return Object.entries(value)
      .map(([k, v]) => `${k}: ${flattenMessage(v)}`)
      .join('; ');
  }
  return String(value);
}

/** Turns whatever openapi-fetch handed back as `error` into an ApiError (falls back when the body was not problem+json). */
export function toApiError(error: unknown, response: Response): ApiError {
  if (error && typeof error === 'object' && 'title' in error) {
    const p = error as Partial<Problem>;
    return new ApiError({ ...p, title: p.title ?? response.statusText, status: p.status ?? response.status });
  }
  return new ApiError({
    title: response.statusText || 'Request failed',
    status: response.status,
    detail: typeof error === 'string' && error ? error : `The server answered ${response.status}.`,
  });
}

export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.problem.detail ?? error.problem.title;
  if (error instanceof Error) return error.message;
  return 'Something went wrong.';
}

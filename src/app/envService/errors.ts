// The environment service's errors: a kind a client can branch on, its HTTP status, and a message for a person.
type ServiceErrorKind =
  | 'bad-request'
  | 'bad-json'
  | 'unauthorized'
  | 'forbidden'
  | 'wrong-host'
  | 'unsupported-media-type'
  | 'not-found'
  | 'outside-roots'
  | 'too-large'
  | 'too-many'
  | 'internal';

const STATUS: Record<ServiceErrorKind, number> = {
  'bad-request': 400,
  'bad-json': 400,
  'outside-roots': 400,
  unauthorized: 401,
  forbidden: 403,
  'wrong-host': 421,
  'unsupported-media-type': 415,
  'not-found': 404,
  'too-large': 413,
  'too-many': 429,
  internal: 500,
};

export class ServiceError extends Error {
  constructor(
    readonly kind: ServiceErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'ServiceError';
  }

  get status(): number {
    return STATUS[this.kind];
  }

  toJSON(): { error: { kind: ServiceErrorKind; message: string } } {
    return { error: { kind: this.kind, message: this.message } };
  }
}

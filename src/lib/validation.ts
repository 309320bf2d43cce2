// One Ajv instance for every schema; a failed check becomes a 400 whose message names the
// field and the problem. allErrors stays off so validation stops at the first problem and
// its cost stays bounded for huge inputs.
import { Ajv, type ErrorObject, type JSONSchemaType } from 'ajv';
import { badRequest } from '../errors.js';

const ajv = new Ajv({ allErrors: false, strict: true, coerceTypes: false, useDefaults: false });

function fieldPath(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

export function describeError(error: ErrorObject, subject: string): string {
  const path = fieldPath(error.instancePath);
  const where = path || subject;
  const inside = path ? `${path}.` : '';
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `missing required field '${inside}${String(params.missingProperty)}'`;
    case 'additionalProperties':
      return `unexpected field '${inside}${String(params.additionalProperty)}'`;
    case 'type':
      return `${where} must be ${params.type === 'object' ? 'an object' : `a ${String(params.type)}`}`;
    case 'maxProperties':
      return `${where} must have at most ${String(params.limit)} entries`;
    case 'maxLength':
      return `${where} must be at most ${String(params.limit)} characters`;
    case 'minLength':
      return `${where} must not be empty`;
    case 'propertyNames':
      return `${where} has a key that is too long or empty`;
    default:
      return `${where} ${error.message ?? 'is invalid'}`;
  }
}

/**
 * The first top-level field whose value is null. No field of a request body takes null: an
 * optional field is left out, so `"step_name": null` is refused rather than guessed at
 * (the schemas mark optional fields `nullable` only because ajv's typing asks for it).
 */
function nullField(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  for (const key in value) {
    if ((value as Record<string, unknown>)[key] === null) return key;
  }
  return undefined;
}

/** Compiles a schema into a function that returns the typed value or throws a 400. */
export function compileValidator<T>(schema: JSONSchemaType<T>, subject = 'body') {
  const validate = ajv.compile(schema);
  return (value: unknown): T => {
    const nulled = nullField(value);
    if (nulled !== undefined) {
      throw badRequest(
        `${nulled} must not be null; leave an optional field out instead`,
        'invalid_body',
      );
    }
    if (validate(value)) return value;
    const first = validate.errors?.[0];
    throw badRequest(
      first ? describeError(first, subject) : `${subject} is invalid`,
      'invalid_body',
    );
  };
}

/** Like compileValidator, but returns the message instead of throwing (for the CLI). */
export function compileChecker<T>(schema: JSONSchemaType<T>, subject: string) {
  const validate = ajv.compile(schema);
  return (value: unknown): { ok: true; value: T } | { ok: false; message: string } => {
    if (validate(value)) return { ok: true, value };
    const first = validate.errors?.[0];
    return { ok: false, message: first ? describeError(first, subject) : `${subject} is invalid` };
  };
}

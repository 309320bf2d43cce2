// One Ajv instance for every schema; a failed check becomes a refusal (invalid_body or
// invalid_query) whose message names the field and the problem, and whose `field` points at it. allErrors stays off so validation stops at the first problem and
// its cost stays bounded for huge inputs. Named schemas (with an $id) are registered once and
// compiled once; the routes' schemas are registered when they are mounted (http/contract.ts).
import { Ajv, type AnySchema, type ErrorObject, type JSONSchemaType } from 'ajv';
import addFormats from 'ajv-formats';
import { DomainError, pointer, type DomainErrorCode } from '../errors.js';

// verbose: a failed pattern can quote its schema's description in the 400.
const ajv = new Ajv({
  allErrors: false,
  strict: true,
  coerceTypes: false,
  useDefaults: false,
  verbose: true,
});
// ajv-formats is CommonJS: under NodeNext its default import is module.exports, which carries
// the plugin again as .default (the one TypeScript knows about).
addFormats.default(ajv, ['date-time']);
// Keywords that only describe (for the API document); Ajv's strict mode must know them.
ajv.addVocabulary(['example']);

/** A JSON Schema with a name, so others can refer to it and one document can list it. */
export interface NamedSchema {
  $id: string;
  [keyword: string]: unknown;
}

const named = new Map<string, NamedSchema>();

/** Registers named schemas once (a second registration of the same object is a no-op). */
export function registerSchemas(schemas: readonly NamedSchema[]): void {
  for (const schema of schemas) {
    const known = named.get(schema.$id);
    if (known === schema) continue;
    if (known) throw new Error(`two different schemas named ${schema.$id}`);
    named.set(schema.$id, schema);
    ajv.addSchema(schema as AnySchema);
  }
}

/**
 * The JSON Pointer of the field an error is about: the value that failed, or for a missing or
 * unexpected field (or key), that field. Undefined for the whole body or query.
 */
function fieldPointer(error: ErrorObject): string | undefined {
  const params = error.params as Record<string, unknown>;
  // A key that breaks propertyNames: Ajv names it on the error itself (the inner keyword's).
  const name =
    params.missingProperty ??
    params.additionalProperty ??
    params.propertyName ??
    (error as ErrorObject & { propertyName?: string }).propertyName;
  const at = typeof name === 'string' ? error.instancePath + pointer(name) : error.instancePath;
  return at === '' ? undefined : at;
}

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
      return subject === 'query' && !path
        ? `unknown query parameter '${String(params.additionalProperty)}'`
        : `unexpected field '${inside}${String(params.additionalProperty)}'`;
    case 'minimum':
    case 'maximum':
      return `${where} must be ${error.keyword === 'minimum' ? 'at least' : 'at most'} ${String(params.limit)}`;
    case 'enum':
      return `${where} must be one of ${(params.allowedValues as unknown[]).join(', ')}`;
    case 'pattern':
    case 'format':
      return `${where} is not valid${error.parentSchema?.description ? `: ${String(error.parentSchema.description)}` : ''}`;
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

/**
 * A function that returns the value, typed, or throws a DomainError (invalid_body, or
 * invalid_query when the subject is the query) naming the field: for a registered schema (by
 * $id) or a schema of its own.
 */
export function compileValidator<T>(schema: JSONSchemaType<T> | NamedSchema, subject = 'body') {
  const validate =
    '$id' in schema && typeof schema.$id === 'string' && named.get(schema.$id) === schema
      ? ajv.getSchema<T>(schema.$id)!
      : ajv.compile<T>(schema as JSONSchemaType<T>);
  const code: DomainErrorCode = subject === 'query' ? 'invalid_query' : 'invalid_body';
  return (value: unknown): T => {
    const nulled = nullField(value);
    if (nulled !== undefined) {
      throw new DomainError(
        code,
        `${nulled} must not be null; leave an optional field out instead`,
        pointer(nulled),
      );
    }
    if (validate(value)) return value as T;
    const first = validate.errors?.[0];
    throw new DomainError(
      code,
      first ? describeError(first, subject) : `${subject} is invalid`,
      first && fieldPointer(first),
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

// Checks answers against the service's own OpenAPI document, as a client generated from it
// would read them: the document is fetched from the API under test, and every answer must be
// described there (its route, its status) and match the schema it gives. A route whose
// responses drift from its description fails every test that calls it.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

type Json = Record<string, unknown>;

interface Checker {
  document: Json;
  validators: Map<string, ValidateFunction>;
  ajv: Ajv2020;
}

const checkers = new Map<string, Promise<Checker>>();

/** Refers every "#/components/…" reference to the document registered under the id "doc". */
function anchored(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(anchored);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema as Json)) {
    out[key] =
      key === '$ref' && typeof value === 'string' && value.startsWith('#/')
        ? `doc${value}`
        : anchored(value);
  }
  return out;
}

export function apiDocument(baseUrl: string): Promise<Json> {
  return checkerFor(baseUrl).then((c) => c.document);
}

function checkerFor(baseUrl: string): Promise<Checker> {
  let checker = checkers.get(baseUrl);
  if (!checker) {
    checker = fetch(`${baseUrl}/openapi.json`)
      .then((res) => res.json() as Promise<Json>)
      .then((document) => {
        // strict off: the document's own keywords (openapi, paths, …) are not JSON Schema.
        const ajv = new Ajv2020({ strict: false, allErrors: true });
        addFormats.default(ajv);
        ajv.addSchema({ $id: 'doc', components: anchored(document.components) } as Json);
        return { document, validators: new Map(), ajv };
      });
    checkers.set(baseUrl, checker);
    checker.catch(() => checkers.delete(baseUrl));
  }
  return checker;
}

/**
 * Throws unless the answer to `method path` with this status is described by the document and
 * its body matches the described schema.
 */
export async function assertDescribed(
  baseUrl: string,
  method: string,
  path: string,
  status: number,
  body: unknown,
): Promise<void> {
  const checker = await checkerFor(baseUrl);
  const key = `${method} ${path} ${status}`;
  let validate = checker.validators.get(key);
  if (!validate) {
    const paths = checker.document.paths as Record<string, Record<string, Json>>;
    const operation = paths[path]?.[method.toLowerCase()];
    if (!operation) throw new Error(`${method} ${path} is not in the API document`);
    const response = (operation.responses as Record<string, Json>)[String(status)];
    if (!response) throw new Error(`${key}: status ${status} is not described for this route`);
    const content = response.content as Record<string, { schema: unknown }> | undefined;
    const schema = content?.['application/json']?.schema;
    if (!schema) throw new Error(`${key}: the document gives no body for this answer`);
    validate = checker.ajv.compile(anchored(schema) as Json);
    checker.validators.set(key, validate);
  }
  if (!validate(body)) {
    throw new Error(
      `${key} does not match the API document: ${checker.ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 1500)}`,
    );
  }
}

/** Throws unless the value matches the document's named schema (components.schemas). */
export async function assertComponent(
  baseUrl: string,
  name: string,
  value: unknown,
): Promise<void> {
  const checker = await checkerFor(baseUrl);
  const key = `component ${name}`;
  let validate = checker.validators.get(key);
  if (!validate) {
    validate = checker.ajv.compile({ $ref: `doc#/components/schemas/${name}` });
    checker.validators.set(key, validate);
  }
  if (!validate(value)) {
    throw new Error(
      `${name} does not match the API document: ${checker.ajv.errorsText(validate.errors)}\n${JSON.stringify(value).slice(0, 1500)}`,
    );
  }
}

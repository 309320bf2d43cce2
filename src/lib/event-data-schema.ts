// The pieces the closed vocabularies (run events, audit entries) describe each type's data
// with: a JSON Schema per type, written `as const` so that its TypeScript type is derived.

export const text = { type: 'string' } as const;
export const time = { type: 'string', format: 'date-time' } as const;
export const index = { type: 'integer', minimum: 0 } as const;

/** An object of exactly these properties, those in `required` always present. */
export const data = <
  const P extends Record<string, unknown>,
  const R extends readonly (keyof P & string)[],
>(
  description: string,
  properties: P,
  required: R,
) => ({ type: 'object', description, additionalProperties: false, properties, required }) as const;

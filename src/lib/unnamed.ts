// A named schema (with an $id) to embed in another: the API document holds no references
// between schemas, and Ajv registers each $id once, so an embedded copy goes without it.

export function unnamed<S extends { $id: string }>(schema: S): Omit<S, '$id'> {
  return Object.fromEntries(Object.entries(schema).filter(([key]) => key !== '$id')) as Omit<
    S,
    '$id'
  >;
}

// A run's input values against its template's fields: each value in its type's string form and
// within its limits (templates/definition/field-values.ts), checked where values come in (a
// create's prefilled values, a step's completion); and the defaults a new run takes. A template
// whose fields declare no type, limit, pattern or default (every template saved before fields
// had types) costs nothing here.
import { DomainError, pointer } from '../../errors.js';
import type { TemplatePage } from '../../templates/definition/definition-types.js';
import { isEmptyValue, valueProblem } from '../../templates/definition/field-values.js';
import { templateNames } from '../../templates/definition/template-definition.js';

/**
 * Refuses the first value that does not parse as its field's type or breaks one of its limits
 * (400 invalid_field_value at /input_fields/<inputId>). An empty value is no value: whether
 * one is required is the completion's check. Keys that are not the template's fields are the
 * caller's check, made before this one.
 */
export function checkValues(
  template: { pages: TemplatePage[] },
  values: Readonly<Record<string, string>>,
): void {
  const names = templateNames(template);
  if (!names.checked) return;
  for (const [inputId, raw] of Object.entries(values)) {
    const field = names.fields.get(inputId);
    if (!field || isEmptyValue(field, raw)) continue;
    const problem = valueProblem(field, raw);
    if (problem !== undefined) {
      throw new DomainError(
        'invalid_field_value',
        `input field '${inputId}' (${field.fieldName}): ${problem}`,
        pointer('input_fields', inputId),
      );
    }
  }
}

/** The values with the template's defaults for the fields they leave out. */
export function withDefaults(
  template: { pages: TemplatePage[] },
  values: Record<string, string>,
): Record<string, string> {
  const { defaults } = templateNames(template);
  if (defaults.length === 0) return values;
  const filled = { ...values };
  for (const field of defaults) {
    if (!Object.hasOwn(filled, field.inputId)) filled[field.inputId] = field.default!;
  }
  return filled;
}
